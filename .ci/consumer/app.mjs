// A consumer's plain JavaScript (no build step): a workflow with addStep, the agent with the
// offline model, a session store whose driver this project did not install, and a program
// written for @llamaindex/workflow-core on stepflow/compat/workflow-core.
import { Context, StartEvent, StopEvent, Workflow } from "stepflow";
import { FunctionCallingAgent } from "stepflow/workflows/function-calling-agent";
import { calculatorTools } from "stepflow/tools/calculator";
import { OfflineDemoLLM } from "stepflow/llm/offline";
import { openSessionStore } from "stepflow/sessions";
import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
import { runWorkflow } from "stepflow/compat/workflow-core/stream/run";
import { runOnce, withTraceEvents } from "stepflow/compat/workflow-core/middleware/trace-events";
import { withValidation } from "stepflow/compat/workflow-core/middleware/validation";
import { zodEvent } from "stepflow/compat/workflow-core/util/zod";
import { WorkflowServer } from "stepflow/server";
import { WorkflowClient } from "stepflow/client";

const flow = new Workflow({ timeout: 10 });
flow.addStep("double", { accepts: [StartEvent], emits: [StopEvent] }, async (_ctx, ev) => new StopEvent({ result: ev.n * 2 }));
console.log(`double: ${await flow.run({ n: 21 }, { ctx: new Context(flow) })}`);

const agent = new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools, timeout: 30 });
const result = await agent.run({ input: "What is (2123 + 2321) * 312?" });
console.log(`agent: ${result.response.content}`);

for (const url of ["sqlite:.stepflow/sessions.db", "postgres://app@127.0.0.1:9/app"]) {
  await openSessionStore(url).then(
    () => console.log("opened?"),
    (error) => console.log(`${error.name}: ${error.message}`),
  );
}

const startEvent = workflowEvent();
const stopEvent = workflowEvent();
const compat = createWorkflow();
compat.handle([startEvent], async (_context, start) => stopEvent.with(start.data * 2));
console.log(`compat: ${(await runWorkflow(compat, startEvent.with(21), stopEvent)).data}`);

const strict = withValidation(withTraceEvents(createWorkflow()), [[[startEvent], [stopEvent]]]);
let once = 0;
strict.handle(
  [startEvent],
  runOnce(() => void once++),
);
strict.strictHandle([startEvent], (sendEvent, _context, start) => sendEvent(stopEvent.with(start.data + 1)));
const { stream, sendEvent } = strict.createContext();
sendEvent(startEvent.with(1), startEvent.with(41));
console.log(`compat middleware: ${(await stream.untilEvent((ev) => stopEvent.include(ev) && ev.data > 2)).data}, once: ${once}, ${typeof zodEvent}`);
const server = new WorkflowServer({ workflows: { agent }, store: "memory:" });
const { url } = await server.listen({ port: 0 });
const done = await new WorkflowClient({ baseUrl: url }).run("agent", { input: "What is 6 * 7?" });
await server.close();
console.log(`server: ${done.result.response.content}`);

/**
 * `agentHandler` of `@llamaindex/workflow`: a workflow handler that gives its event to an agent,
 * which ends its task by sending one of the result events through its `send_<debugLabel>` tools.
 */
import { ConfigurationError, WorkflowRuntimeError } from "../../index.ts";
import type { WorkflowContext } from "../workflow-core/context.ts";
import type { WorkflowEventData } from "../workflow-core/event.ts";
import { AgentWorkflow } from "./agent.ts";
import { agentToolCallEvent } from "./events.ts";
import { FunctionAgent, type StepHandlerParams } from "./function-agent.ts";

/**
 * A handler for `workflow.handle([...], agentHandler({...}))`: each event it takes starts an
 * agent (see `FunctionAgent.fromWorkflowStep`) with the event's data as its input; the agent
 * sends the workflow's next event with its tools. The handler fails when the agent finished
 * without sending one of `results`.
 * @example
 * import { z } from "zod";
 * import { agentHandler, createWorkflow, workflowEvent, zodEvent } from "stepflow/compat/workflow";
 * import { ScriptedLLM } from "stepflow/llm/scripted";
 * const ticketEvent = workflowEvent<{ text: string }>();
 * const triagedEvent = zodEvent(z.object({ team: z.enum(["billing", "tech"]) }), { debugLabel: "triaged" });
 * const llm = new ScriptedLLM([{ toolCalls: [{ name: "send_triaged", input: { eventData: { team: "billing" } } }] }, { text: "Sent to billing." }]);
 * const workflow = createWorkflow();
 * workflow.handle([ticketEvent], agentHandler({ instructions: "Send the ticket to the right team.", results: [triagedEvent], llm }));
 * const { stream, sendEvent } = workflow.createContext();
 * sendEvent(ticketEvent.with({ text: "I was charged twice." }));
 * console.log((await stream.untilEvent(triagedEvent)).data.team); // billing
 */
export function agentHandler(params: Omit<StepHandlerParams, "workflowContext">) {
  if (params === null || typeof params !== "object" || !Array.isArray(params.results) || params.results.length === 0)
    throw new ConfigurationError(
      "agentHandler() takes { instructions, results: [zodEvent(...)], llm?, tools?, events? }: results is missing or empty.",
      "results",
      params?.results,
    );
  return async (context: WorkflowContext, event: WorkflowEventData<unknown>): Promise<void> => {
    const agent = FunctionAgent.fromWorkflowStep({ ...params, workflowContext: context });
    const workflow = new AgentWorkflow({ agents: [agent], rootAgent: agent });
    const events = await workflow.runStream(`Handle with this input data: ${JSON.stringify(event.data)}`).toArray();
    const resultTools = new Set(params.results.map((result) => `send_${result.debugLabel}`));
    if (!events.some((ev) => agentToolCallEvent.include(ev) && resultTools.has(ev.data.toolName)))
      throw new WorkflowRuntimeError(
        `The agent finished without emitting a required result event: it called none of ${[...resultTools].join(", ")}. Say in the instructions which result event ends the task.`,
      );
  };
}

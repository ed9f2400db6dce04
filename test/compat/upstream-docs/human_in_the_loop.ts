// From run-llama/workflows-ts docs/examples/human_in_the_loop.ts (MIT licence), unchanged except for the imports (here the sources; an application imports "stepflow/compat/workflow-core").
import { createWorkflow, workflowEvent } from "../../../src/compat/workflow-core/index.ts";
import { createStatefulMiddleware } from "../../../src/compat/workflow-core/middleware/state.ts";

// Define events
export const startEvent = workflowEvent<string>();
export const humanRequestEvent = workflowEvent<void>();
export const humanResponseEvent = workflowEvent<string>();
export const stopEvent = workflowEvent<string>();

const { withState } = createStatefulMiddleware(() => ({}));
export const workflow = withState(createWorkflow());

// Workflow that needs human input
workflow.handle([startEvent], () => {
  return humanRequestEvent.with();
});

workflow.handle([humanResponseEvent], (_context, event) => {
  return stopEvent.with(`Human said: ${event.data}`);
});

// Usage with snapshot/resume
const { sendEvent, snapshot, stream } = workflow.createContext();
sendEvent(startEvent.with("begin"));

// Wait for a human request and take a snapshot
await stream.until(humanRequestEvent).toArray();
const snapshotData = await snapshot();

// Later (in another request): resume and provide human input
const resumedContext = workflow.resume(snapshotData);
resumedContext.sendEvent(humanResponseEvent.with("hello world"));

const resultEvent = await resumedContext.stream.untilEvent(stopEvent);
console.log(resultEvent.data); // "Human said: hello world"

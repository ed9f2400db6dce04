// From run-llama/workflows-ts docs/examples/state.ts (MIT licence), unchanged except for the imports (here the sources; an application imports "stepflow/compat/workflow-core").
import { createWorkflow, workflowEvent } from "../../../src/compat/workflow-core/index.ts";
import { createStatefulMiddleware } from "../../../src/compat/workflow-core/middleware/state.ts";

type MyWorkflowState = {
  previous_message: string;
};

const { withState } = createStatefulMiddleware((state: MyWorkflowState) => state);
export const workflow = withState(createWorkflow());

export const startEvent = workflowEvent<{ userInput: string }>();
export const stopEvent = workflowEvent<{ result: string }>();

workflow.handle([startEvent], async (context, { data }) => {
  const { state } = context;
  const { userInput } = data;

  const previous_message = state.previous_message;
  state.previous_message = userInput;

  return stopEvent.with({
    result: "Processed message: " + userInput + " previous message: " + previous_message,
  });
});
const { stream, sendEvent } = workflow.createContext({
  previous_message: "my initial previous message",
});

sendEvent(startEvent.with({ userInput: "Hello, how are you?" }));

const result = await stream.untilEvent(stopEvent);
console.log(result.data);

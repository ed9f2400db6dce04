/**
 * `stepflow/compat/workflow-core/middleware/validation`: upstream's `withValidation` — the
 * workflow's graph declared as `[inputs, outputs]` pairs, and `strictHandle`, whose handlers get
 * a `sendEvent` that the type checker lets send only the declared outputs.
 */
import { ConfigurationError } from "../../../index.ts";
import type { Handler, WorkflowContext } from "../context.ts";
import type { WorkflowEvent, WorkflowEventData } from "../event.ts";

/**
 * A handler of `strictHandle`: `sendEvent` first (typed by the declared outputs), then the context and the events.
 * @example
 * import { workflowEvent, type WorkflowEvent } from "stepflow/compat/workflow-core";
 * import type { ValidationHandler } from "stepflow/compat/workflow-core/middleware/validation";
 * const Start = workflowEvent();
 * const Stop = workflowEvent<number>();
 * type Graph = [[[typeof Start], [typeof Stop]]];
 * const handler: ValidationHandler<Graph, [typeof Start], void> = (sendEvent) => sendEvent(Stop.with(1));
 */
export type ValidationHandler<
  Validation extends [inputs: WorkflowEvent<unknown>[], outputs: WorkflowEvent<unknown>[]][],
  AcceptEvents extends WorkflowEvent<unknown>[],
  Result extends WorkflowEventData<unknown> | void,
  Context extends WorkflowContext = WorkflowContext,
> = (
  sendEvent: (
    ...inputs: Array<
      Validation[number] extends infer Tuple
        ? Tuple extends [AcceptEvents, infer Outputs]
          ? Outputs extends WorkflowEvent<unknown>[]
            ? ReturnType<Outputs[number]["with"]>
            : never
          : never
        : never
    >
  ) => void,
  context: Context,
  ...events: { [K in keyof AcceptEvents]: ReturnType<AcceptEvents[K]["with"]> }
) => Result | Promise<Result>;

/**
 * What {@link withValidation} adds to a workflow.
 * @example
 * import type { WithValidationWorkflow } from "stepflow/compat/workflow-core/middleware/validation";
 * type Strict = WithValidationWorkflow<[]>;
 */
export type WithValidationWorkflow<
  Validation extends [inputs: WorkflowEvent<unknown>[], outputs: WorkflowEvent<unknown>[]][],
  Context extends WorkflowContext = WorkflowContext,
> = {
  strictHandle<const AcceptEvents extends WorkflowEvent<unknown>[], Result extends WorkflowEventData<unknown> | void>(
    accept: AcceptEvents,
    handler: ValidationHandler<Validation, AcceptEvents, Result, Context>,
  ): void;
};

/**
 * Declares the workflow's graph: each pair says which events (`outputs`, sent together in one
 * `sendEvent` call) a handler of `inputs` may send. `strictHandle` checks this at compile time;
 * at run time an undeclared send is sent anyway, with upstream's `console.warn`
 * (`"Invalid input detected [%s]"` and the events' data).
 * @example
 * import { createWorkflow, workflowEvent } from "stepflow/compat/workflow-core";
 * import { withValidation } from "stepflow/compat/workflow-core/middleware/validation";
 * import { runWorkflow } from "stepflow/compat/workflow-core/stream/run";
 * const Start = workflowEvent<string>({ debugLabel: "start" });
 * const Stop = workflowEvent<number>({ debugLabel: "stop" });
 * const workflow = withValidation(createWorkflow(), [[[Start], [Stop]]]);
 * workflow.strictHandle([Start], (sendEvent, _context, start) => {
 *   sendEvent(Stop.with(start.data.length)); // sendEvent(Start.with("x")) would not compile
 * });
 * console.log((await runWorkflow(workflow, Start.with("hello"), Stop)).data); // 5
 */
export function withValidation<
  const Validation extends [inputs: WorkflowEvent<unknown>[], outputs: WorkflowEvent<unknown>[]][],
  WorkflowLike extends {
    handle<const AcceptEvents extends WorkflowEvent<unknown>[], Result extends WorkflowEventData<unknown> | void>(
      accept: AcceptEvents,
      handler: Handler<AcceptEvents, Result>,
    ): void;
    createContext(...args: never[]): WorkflowContext;
  },
>(workflow: WorkflowLike, validation: Validation): WithValidationWorkflow<Validation> & WorkflowLike {
  if (!Array.isArray(validation) || validation.some((pair) => !Array.isArray(pair) || !Array.isArray(pair[0]) || !Array.isArray(pair[1])))
    throw new ConfigurationError(
      "withValidation() takes the workflow, then a list of [inputs, outputs] pairs, for example [[[startEvent], [stopEvent]]].",
      "validation",
      validation,
    );
  const safeSender = (context: WorkflowContext, events: readonly WorkflowEventData<unknown>[]) => {
    const allowed = validation
      .filter(([inputs]) => inputs.length === events.length && inputs.every((input, i) => input.include(events[i])))
      .map(([, outputs]) => outputs);
    return (...sent: WorkflowEventData<unknown>[]) => {
      const declared = allowed.some((outputs) => outputs.length === sent.length && outputs.every((output, i) => output.include(sent[i])));
      if (!declared)
        // Upstream's exact words and arguments: programs and tests written for upstream match on them.
        console.warn("Invalid input detected [%s]", sent.map((event) => String(event.data)).join(", "));
      context.sendEvent(...sent);
    };
  };
  return {
    ...workflow,
    strictHandle(accept, handler) {
      workflow.handle(
        accept,
        (context, ...events) =>
          (handler as unknown as (send: (...e: WorkflowEventData<unknown>[]) => void, context: WorkflowContext, ...events: unknown[]) => unknown)(
            safeSender(context, events as WorkflowEventData<unknown>[]),
            context,
            ...events,
          ) as WorkflowEventData<unknown> | void,
      );
    },
  } as WithValidationWorkflow<Validation> & WorkflowLike;
}

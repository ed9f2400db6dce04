/**
 * What a client may start a run from: the context it sent (restored as untrusted, its events
 * checked as events sent in are) and the input, checked against the workflow's input schema.
 * Each refusal is a 400 or 403 that says what to send instead.
 */
import { Context, shadowingField, untrustedContext } from "../core/internal.ts";
import type { ContextJSON } from "../core/internal.ts";
import type { JsonObject } from "../client/types.ts";
import { checkContextEvents } from "./context-events.ts";
import { sendableTypes } from "./event-intake.ts";
import { ServerRequestError } from "./refusals.ts";
import type { ServedWorkflow } from "./served-workflow.ts";

/**
 * What a run starts from once the request is checked: the client's context (none: the run
 * starts from its input, or from `continueFrom`) and the input as the workflow's schema gave it
 * (none: the context holds a run saved mid-way, which takes no new input).
 * @example `const { ctx, input } = checkStartRequest(wf, { topic: "otters" }, {}, false);`
 */
export interface StartRequest {
  readonly ctx: Context | undefined;
  readonly input: object | undefined;
}

/**
 * Checks what a client sent to start a run of `wf`: `input`, and in `options` a `context` (or
 * `from`, a handler to continue from, which only rules a context out here). A context saved
 * mid-run is refused unless the operator allows it (`acceptMidRunContexts`).
 * @example `const { ctx, input } = checkStartRequest(wf, body.input, { context: body.context }, false);`
 */
export function checkStartRequest(
  wf: ServedWorkflow,
  input: JsonObject | undefined,
  options: { readonly from?: string | undefined; readonly context?: JsonObject | undefined },
  acceptMidRunContexts: boolean,
): StartRequest {
  let ctx: Context | undefined;
  if (options.context !== undefined) {
    if (options.from !== undefined) throw new ServerRequestError(400, "invalid_request", "Give context or continueFrom, not both.");
    try {
      // A client's context is not the run's record: its steps' records and the answers it holds are dropped.
      ctx = Context.fromJSON(wf.workflow, untrustedContext(options.context as unknown as ContextJSON, { fromOutside: sendableTypes(wf).keys() }));
    } catch (error) {
      throw new ServerRequestError(400, "invalid_context", error instanceof Error ? error.message : String(error));
    }
  }
  // A context saved mid-run continues that run, which takes no new input.
  if (input === undefined && !ctx?.hasSavedRun)
    throw new ServerRequestError(
      400,
      "invalid_request",
      "The request is not valid: body.input: the StartEvent's fields are needed, unless context holds a run saved mid-way.",
    );
  if (input !== undefined && ctx?.hasSavedRun)
    throw new ServerRequestError(400, "invalid_request", "This context was saved in the middle of a run: send it without input to continue that run.");
  if (ctx?.hasSavedRun && !acceptMidRunContexts)
    throw new ServerRequestError(
      403,
      "mid_run_context_refused",
      "This server does not continue runs from contexts that clients send: a context saved mid-run holds what the run was about to do. Send a context saved after a run (a conversation), or continue a run of this server with continueFrom; the operator can allow mid-run contexts (acceptMidRunContexts), whose approvals are then asked again.",
    );
  if (ctx?.hasSavedRun) {
    // Its events go into the run as if sent in: each must fit its schema, as POST …/events asks of one.
    const checked = checkContextEvents(wf, ctx);
    if (!checked.ok) throw new ServerRequestError(400, "invalid_context", checked.message);
    ctx = checked.ctx;
  }
  const checked = input === undefined ? undefined : wf.inputSchema ? parseInput(wf, input) : input;
  const shadowing = checked && shadowingField(checked, wf.workflow.graph.startEvent);
  if (shadowing !== undefined)
    throw new ServerRequestError(
      400,
      "invalid_input",
      `The input does not fit this workflow: input.${shadowing} is a property every event has, not a field its StartEvent may be given. Leave it out.`,
    );
  return { ctx, input: checked };
}

/**
 * The input as the workflow's input schema gives it (its defaults and transforms), or a 400 that
 * lists what does not fit.
 * @example `const input = wf.inputSchema ? parseInput(wf, { topic: "otters" }) : { topic: "otters" };`
 */
export function parseInput(wf: ServedWorkflow, input: JsonObject): object {
  const parsed = wf.inputSchema?.safeParse(input);
  if (parsed && !parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "input"}: ${i.message}`).join("; ");
    throw new ServerRequestError(400, "invalid_input", `The input does not fit this workflow: ${issues}.`);
  }
  return (parsed?.data ?? input) as object;
}

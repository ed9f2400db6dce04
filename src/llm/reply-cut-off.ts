/**
 * The error every provider throws when the model's token limit cut a tool call's arguments
 * off: asked again under the same limit, the model would be cut off again, so this is not a
 * mistake for it to correct but a limit for the user to raise.
 */
import { StepflowError } from "../core/internal.ts";

/**
 * The model's reply reached its token limit (OpenAI's `finish_reason: "length"`, Anthropic's
 * `stop_reason: "max_tokens"`) in the middle of a tool call, so the call's arguments are incomplete.
 * @example
 * try { await agent.run({ input }); } catch (e) { if (e instanceof LLMReplyCutOffError) console.log(e.tool, e.maxTokens); } // then raise maxTokens
 */
export class LLMReplyCutOffError extends StepflowError {
  override name = "LLMReplyCutOffError";
  /**
   * `tool`: the tool whose call was cut off; `maxTokens`: the limit that cut it (undefined: the
   * server's own); `reason`: what the server said, as it said it.
   */
  constructor(
    readonly tool: string,
    readonly maxTokens: number | undefined,
    reason = 'finish_reason "length"',
  ) {
    super(
      `The model's reply was cut off by its token limit (${reason}) in the middle of a call to tool ${tool}, so its arguments are incomplete. Raise maxTokens${maxTokens === undefined ? "" : ` (now ${maxTokens})`} or ask for less.`,
    );
  }
}

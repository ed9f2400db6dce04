/**
 * The errors of a reply that is not the model's whole answer although the stream ended well:
 * its token limit cut a tool call's arguments off (asked again under the same limit, the model
 * would be cut off again, so this is a limit for the user to raise, not a mistake for the model
 * to correct), or the provider stopped the reply itself.
 */
import { StepflowError } from "../core/internal.ts";

/**
 * The model's reply reached its token limit (OpenAI's `finish_reason: "length"`, Anthropic's
 * `stop_reason: "max_tokens"`), or the model's context window (Anthropic's
 * `stop_reason: "model_context_window_exceeded"`), in the middle of a tool call, so the call's
 * arguments are incomplete.
 * @example
 * try { await agent.run({ input }); } catch (e) { if (e instanceof LLMReplyCutOffError) console.log(e.tool, e.maxTokens); } // then raise maxTokens
 */
export class LLMReplyCutOffError extends StepflowError {
  override name = "LLMReplyCutOffError";
  /**
   * `tool`: the tool whose call was cut off; `maxTokens`: the limit that cut it (undefined: the
   * server's own); `reason`: what the server said, as it said it; `limit`: which limit it was.
   */
  constructor(
    readonly tool: string,
    readonly maxTokens: number | undefined,
    reason = 'finish_reason "length"',
    readonly limit: "max-tokens" | "context-window" = "max-tokens",
  ) {
    super(
      limit === "context-window"
        ? `The model's reply was cut off by its context window (${reason}) in the middle of a call to tool ${tool}, so its arguments are incomplete: the conversation and the reply no longer fit the model. Send less history (a smaller memory token limit), shorter tool results, or use a model with a larger context window.`
        : `The model's reply was cut off by its token limit (${reason}) in the middle of a call to tool ${tool}, so its arguments are incomplete. Raise maxTokens${maxTokens === undefined ? "" : ` (now ${maxTokens})`} or ask for less.`,
    );
  }
}

/**
 * The provider stopped the reply before the model finished it (Gemini's `finishReason` other
 * than `STOP`, Anthropic's `stop_reason: "refusal"`), or refused the prompt (Gemini's
 * `promptFeedback.blockReason`), so there is no answer to give the agent: an empty or partial
 * reply taken as the model's would end the run with it. `reason` is the API's, e.g.
 * `finishReason "SAFETY"`.
 * @example
 * try { await agent.run({ input }); } catch (e) { if (e instanceof LLMReplyStoppedError) console.log(e.reason); }
 */
export class LLMReplyStoppedError extends StepflowError {
  override name = "LLMReplyStoppedError";
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

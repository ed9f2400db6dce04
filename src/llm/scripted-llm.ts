/**
 * A scripted `ToolCallLLM` for tests (yours and ours): it replies from a queue, or from a
 * function of the request, streams text in the pieces you give it, makes the tool calls you
 * give it, and records every request it received.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { JSONObject } from "@llamaindex/core/global";
import type { ChatMessage, PartialToolCall, ToolCall } from "@llamaindex/core/llms";
import { StepflowError } from "../core/internal.ts";
import { LocalLLM } from "./local-llm.ts";
import type { LocalReply } from "./local-llm.ts";

/**
 * A {@link ScriptedLLM} was asked more often than its script has replies: the workflow called
 * the model more times than the test expected. `request` counts from 1.
 * @example
 * await expect(run).rejects.toMatchObject({ name: "ScriptExhaustedError", request: 3, replies: 2 });
 */
export class ScriptExhaustedError extends StepflowError {
  override name = "ScriptExhaustedError";
  constructor(
    message: string,
    readonly request: number,
    readonly replies: number,
  ) {
    super(message);
  }
}

const NONE: readonly never[] = Object.freeze([]);

/** One scripted reply: text (one delta per array item), tool calls, or both. */
export interface ScriptedReply {
  readonly text?: string | readonly string[];
  /** `id` defaults to `call_1`, `call_2`, … in the order calls are made. */
  /** `input` as a string: the arguments as a JSON string, as some adapters stream them (LlamaIndex's `PartialToolCall`). */
  readonly toolCalls?: readonly { readonly id?: string; readonly name: string; readonly input: JSONObject | string }[];
}

/** What the scripted LLM received: a copy of the messages and the names of the tools offered. */
export interface ScriptedRequest {
  readonly messages: ChatMessage[];
  readonly tools: string[];
}

/** A reply chosen from the request (`index` counts requests from 0). */
export type ScriptedReplyFn = (request: ScriptedRequest, index: number) => ScriptedReply;

/** Options of {@link ScriptedLLM}. */
export interface ScriptedLLMOptions {
  /** Reported in `metadata.contextWindow` (memory trims to it). Default 128,000. */
  readonly contextWindow?: number;
  /** Milliseconds to wait before each reply's first chunk, to show a slow model in a demo. Default 0. */
  readonly delayMs?: number;
  /** Keep a copy of every request in `requests`. Default true; false for long runs (benchmarks). */
  readonly record?: boolean;
}

/**
 * @example
 * const llm = new ScriptedLLM([
 *   { toolCalls: [{ name: "add", input: { x: 2123, y: 2321 } }] },
 *   { text: ["The answer ", "is 4444."] },
 * ]);
 * const agent = new FunctionCallingAgent({ llm, tools: [add] });
 * await agent.run({ input: "2123 + 2321?" });
 * llm.requests[1].messages; // user, assistant tool call, tool result
 */
export class ScriptedLLM extends LocalLLM {
  /** Every request, in order (unless `record: false`). */
  readonly requests: ScriptedRequest[] = [];
  readonly #script: readonly ScriptedReply[] | ScriptedReplyFn;
  readonly #delayMs: number;
  readonly #record: boolean;
  #callIds = 0;
  #requestCount = 0;

  constructor(script: readonly ScriptedReply[] | ScriptedReplyFn, options: ScriptedLLMOptions = {}) {
    super("scripted", options.contextWindow);
    this.#script = script;
    this.#delayMs = options.delayMs ?? 0;
    this.#record = options.record ?? true;
  }

  /**
   * Not an async function: a request in flight keeps only its timer and the reply it will
   * give, not a frame waiting on the timer (what tests with many sessions at once measure).
   */
  protected reply(messages: ChatMessage[], tools: string[]): Promise<LocalReply> {
    let reply: LocalReply;
    try {
      reply = this.#decide(messages, tools);
    } catch (error) {
      return Promise.reject(error as Error); // as the async function it replaces would
    }
    return this.#delayMs > 0 ? delay(this.#delayMs, reply) : Promise.resolve(reply);
  }

  #decide(messages: ChatMessage[], tools: string[]): LocalReply {
    const request: ScriptedRequest = { messages: this.#record ? structuredClone(messages) : messages, tools };
    const index = this.#requestCount++;
    if (this.#record) this.requests.push(request);
    const reply = this.#reply(request, index);
    // A reply without text or calls shares one empty list (read only) instead of making two.
    const deltas = typeof reply.text === "string" ? [reply.text] : reply.text ? [...reply.text] : NONE;
    const toolCalls: readonly (ToolCall | PartialToolCall)[] = reply.toolCalls
      ? reply.toolCalls.map((call): ToolCall | PartialToolCall => {
          const id = call.id ?? `call_${++this.#callIds}`;
          return typeof call.input === "string" ? { id, name: call.name, input: call.input } : { id, name: call.name, input: call.input };
        })
      : NONE;
    return { deltas, toolCalls };
  }

  #reply(request: ScriptedRequest, index: number): ScriptedReply {
    if (typeof this.#script === "function") return this.#script(request, index);
    const reply = this.#script[index];
    if (!reply) {
      throw new ScriptExhaustedError(
        `ScriptedLLM has no reply left for request #${index + 1} (it was given ${this.#script.length} replies). Add a reply to the script.`,
        index + 1,
        this.#script.length,
      );
    }
    return reply;
  }
}

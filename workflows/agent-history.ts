/**
 * The agent's history as a run reads it from memory, counted once per message: a session
 * continued turn after turn in one process hands the agent the same message objects (its
 * window cache keeps them), so neither converting a message for the model nor counting its
 * tokens nor deciding its tool-call block is done again on the next LLM call or the next turn.
 */
import type { ChatMessage } from "@llamaindex/core/llms";
import type { Memory, MemoryMessage } from "@llamaindex/core/memory";
import { isQuestion, messageBytes, messageTokens, toolCallsOf, toolResultIdOf } from "../src/llm/chat-history.ts";
import { agentMessages } from "./agent-memory.ts";

// The history each memory's last run started from, by the memory's first message: the next
// run on the same messages (the same Memory, or the window Sessions keeps between turns) starts
// from what was counted and decided then.
// `source` is the list the memory keeps, which only grows: its first `length` messages stay as they were.
const REMEMBER_FROM = 64; // messages
const lastRuns = new WeakMap<object, { readonly source: readonly object[]; readonly length: number; readonly history: RunHistory }>();

/**
 * The history a new run on `memory` sends the model, trimmed to `tokenLimit` tokens: what
 * `new RunHistory(await memory.get(), tokenLimit)` gives, reusing what the previous run
 * on the same messages counted, so that a run costs the messages added since, not the history.
 * @example
 * const history = await runHistory(memory, tokenLimit);
 * const input = history.wellFormed();
 */
export async function runHistory(memory: Memory, tokenLimit: number): Promise<RunHistory> {
  const source = agentMessages(memory);
  if (!source) {
    const history = new RunHistory(await memory.get(), tokenLimit);
    history.trim();
    return history;
  }
  const first = source[0];
  const last = first === undefined ? undefined : lastRuns.get(first);
  let same = last && last.history.tokenLimit === tokenLimit && last.length <= source.length ? last.length : 0;
  for (let i = 0; i < same; i++) {
    if (source[i] !== last?.source[i]) same = 0; // another history with the same first message: start afresh
  }
  const history = last && same > 0 ? RunHistory.after(last.history, same, toChat(source, same)) : new RunHistory(toChat(source, 0), tokenLimit);
  // A short history is counted again faster than it is looked up (and a WeakMap entry per run costs the GC).
  if (first !== undefined && source.length >= REMEMBER_FROM) lastRuns.set(first, { source, length: source.length, history });
  history.trim();
  return history;
}

function toChat(source: readonly MemoryMessage[], from: number): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = from; i < source.length; i++) out.push(chatMessage(source[i] as MemoryMessage));
  return out;
}

function chatMessage(message: MemoryMessage): ChatMessage {
  // What memory.get() makes of it (LlamaIndex's ChatMessageAdapter.fromMemory).
  return { content: message.content, role: message.role, options: message.options } as ChatMessage;
}

/** How a message enters what is sent: itself, nothing, or (a tool call whose results are missing) its text alone. */
type Sent = ChatMessage | null;

/**
 * The history one run sends the model, kept up to date as the run adds messages: what
 * `wellFormedHistory(recentHistory(history, tokenLimit))` gives, applied after each addition to
 * the history the previous call kept (as the agent did), in time proportional to the messages
 * added rather than to the history. Each message's bytes and tokens are counted once; the
 * newest messages that fit move forward as a window (its start only ever moves forward).
 * @example
 * const history = new RunHistory(await memory.get(), tokenLimit);
 * history.push({ role: "user", content: "Hi" });
 * history.trim();
 * const input = history.wellFormed();
 */
export class RunHistory {
  readonly tokenLimit: number;
  readonly #limit: number;
  /** Every message of the run, from the first in memory: the history kept is `#pinned` and `#all[#start..]`. */
  #all: ChatMessage[];
  #start = 0;
  /** The newest question, kept before `#start` (recentHistory always keeps it). */
  #pinned: number | undefined;
  // Arrays kept dense (V8's fast elements), one entry per message: 0 or undefined where not known yet.
  // Tokens + 1, as recentHistory counts them; filled lazily, and made only once tokens are
  // counted: a short conversation never needs it, and each array a run grows keeps a backing
  // store of 17+ slots alive while the session waits for its model.
  #costs: number[] = [];
  /** `#bytePrefix[i]`: the bytes (+ 1 each) of messages 0 to i - 1, as recentHistory counts them before it tokenizes. */
  #bytePrefix: number[] = [0];
  /** Whether tokens are counted: not while the history fits by bytes. */
  #counting = false;
  /** `#tokenPrefix[j] - #tokenPrefix[i]`: the tokens (+ 1 each) of messages i to j - 1, for i ≥ `#countedFrom`. */
  #tokenPrefix: number[] = [];
  #countedFrom = 0;
  #lastQuestion = -1;
  #lastNotResult = -1;
  /** What each message contributes to `wellFormed()`, once its tool-call block is complete. */
  #sent: (Sent | undefined)[] = [];
  /** Start of the last tool-call block: its decision may change as results arrive. */
  #openBlock = -1;
  /** What `wellFormed()` returned last (from message `first`; those before `stableUpTo` are final, `stableCount` of them sent), to start the next call from. */
  #lastSent:
    | {
        readonly out: ChatMessage[];
        readonly pinned: number | undefined;
        readonly first: number;
        readonly stableUpTo: number;
        readonly stableCount: number;
      }
    | undefined;
  /** The kept history as recentHistory returned it, rebuilt when it changed. */
  #kept: ChatMessage[] | undefined;

  constructor(messages: readonly ChatMessage[], tokenLimit: number) {
    this.tokenLimit = this.#limit = tokenLimit;
    this.#all = [];
    for (const message of messages) this.#append(message); // not push(...messages): a long memory would overflow the stack
  }

  /**
   * A new run's history (not trimmed yet): the first `kept` messages of `previous` (as it was
   * built, before its run added any), with what was counted of them, then `added`.
   */
  static after(previous: RunHistory, kept: number, added: readonly ChatMessage[]): RunHistory {
    const history = new RunHistory([], previous.#limit);
    const all = previous.#all;
    history.#all = all.slice(0, kept);
    history.#bytePrefix = previous.#bytePrefix.slice(0, kept + 1);
    if (previous.#counting) {
      history.#counting = true;
      history.#costs = previous.#costs.slice(0, kept);
      if (previous.#countedFrom <= kept) {
        history.#tokenPrefix = previous.#tokenPrefix.slice(0, kept + 1);
        history.#countedFrom = previous.#countedFrom;
      } else {
        history.#tokenPrefix = new Array<number>(kept + 1).fill(0);
        history.#countedFrom = kept;
      }
    }
    // The decisions of the last tool-call block before `kept` may change with the messages after it.
    let block = kept;
    while (block > 0 && toolResultIdOf(all[block - 1] as ChatMessage) !== undefined) block--;
    if (block > 0 && toolCallsOf(all[block - 1] as ChatMessage).length > 0) block--;
    history.#sent = previous.#sent.slice(0, kept);
    history.#sent.fill(undefined, block);
    for (let i = kept - 1; i >= 0 && (history.#lastQuestion < 0 || history.#lastNotResult < 0); i--) {
      const message = all[i] as ChatMessage;
      if (history.#lastQuestion < 0 && isQuestion(message)) history.#lastQuestion = i;
      if (history.#lastNotResult < 0 && toolResultIdOf(message) === undefined) history.#lastNotResult = i;
    }
    // What the previous run last sent, up to that block, is what this run sends of them.
    const sent = previous.#lastSent;
    if (sent && sent.pinned === undefined && block > sent.first) {
      const stableUpTo = Math.min(sent.stableUpTo, block);
      let stableCount = sent.stableCount;
      for (let p = stableUpTo; p < sent.stableUpTo; p++) if (previous.#sent[p]) stableCount--;
      history.#lastSent = { ...sent, stableUpTo, stableCount };
    }
    for (const message of added) history.#append(message);
    return history;
  }

  /** Adds messages at the end (not trimmed until `trim()`). */
  push(...messages: ChatMessage[]): number {
    for (const message of messages) this.#append(message);
    return this.length;
  }

  #append(message: ChatMessage): void {
    const at = this.#all.length;
    this.#all.push(message);
    if (isQuestion(message)) this.#lastQuestion = at;
    if (toolResultIdOf(message) === undefined) this.#lastNotResult = at;
    this.#bytePrefix.push((this.#bytePrefix[at] as number) + messageBytes(message) + 1);
    this.#sent.push(undefined);
    if (this.#counting) {
      this.#costs.push(0);
      this.#tokenPrefix.push((this.#tokenPrefix[at] as number) + this.#cost(at));
    }
    this.#kept = undefined;
  }

  /** How many messages the run has seen: those it started with, and those added since. */
  get size(): number {
    return this.#all.length;
  }

  /** How many messages the kept history has (as `recentHistory`'s result). */
  get length(): number {
    return this.#all.length - this.#start + (this.#pinned === undefined ? 0 : 1);
  }

  /** The newest message kept. */
  get last(): ChatMessage | undefined {
    return this.#all.length > this.#start ? this.#all.at(-1) : this.#pinned === undefined ? undefined : this.#all[this.#pinned];
  }

  /** The kept history, as `recentHistory` returned it: the newest question first if it is older than the rest. */
  messages(): ChatMessage[] {
    if (!this.#kept) {
      const range = this.#all.slice(this.#start);
      this.#kept = this.#pinned === undefined ? range : [this.#all[this.#pinned] as ChatMessage, ...range];
    }
    return this.#kept;
  }

  /** Drops the oldest messages that no longer fit, as `recentHistory(this.messages(), tokenLimit)` does. */
  trim(): void {
    const n = this.#all.length;
    if (!this.#counting) {
      // Fits by bytes (no token is shorter than a byte): nothing to drop, and nothing tokenized.
      const bytes = this.#bytesBetween(this.#start, n) + (this.#pinned === undefined ? 0 : this.#bytesBetween(this.#pinned, this.#pinned + 1));
      if (bytes <= this.#limit) return;
      this.#counting = true;
      this.#costs = new Array<number>(n).fill(0);
      this.#tokenPrefix = new Array<number>(n + 1).fill(0);
      this.#countedFrom = n;
    }
    const q = this.#lastQuestion >= this.#start ? this.#lastQuestion : this.#pinned;
    // The newest message that is not a tool result, with its results, is always kept; if the
    // whole range is results, everything kept is.
    const newest = this.#lastNotResult >= this.#start ? this.#lastNotResult : this.#start;
    const budget = this.#limit - (q === undefined ? 0 : this.#cost(q));
    // Counted from the newest back: the messages always kept, then older ones while they fit.
    while (this.#countedFrom > newest) this.#countBack();
    while (this.#countedFrom > this.#start && this.#tokensFrom(this.#countedFrom, q) <= budget) this.#countBack();
    // The oldest message kept: the first from which the rest fits (the sums only shrink forward).
    let s = Math.max(this.#start, this.#countedFrom);
    let hi = Math.max(newest, s);
    while (s < hi) {
      const mid = (s + hi) >> 1;
      if (this.#tokensFrom(mid, q) <= budget) hi = mid;
      else s = mid + 1;
    }
    if (s === this.#start) {
      // Everything from #start fits; an older question kept before it stays if it fits too.
      const pinned = this.#pinned;
      if (pinned !== undefined && pinned !== q && this.#lastNotResult >= this.#start && this.#cost(pinned) > budget - this.#tokensFrom(s, q)) {
        this.#pinned = undefined;
        this.#kept = undefined;
      }
      return;
    }
    this.#start = s;
    this.#pinned = q !== undefined && q < s ? q : undefined;
    this.#kept = undefined;
  }

  /** Tokens (+ 1 each) of the messages from `from` on, the question `q` left out (recentHistory counts it first). */
  #tokensFrom(from: number, q: number | undefined): number {
    const prefix = this.#tokenPrefix;
    return (prefix[this.#all.length] as number) - (prefix[from] as number) - (q !== undefined && q >= from ? this.#cost(q) : 0);
  }

  #countBack(): void {
    const at = --this.#countedFrom;
    this.#tokenPrefix[at] = (this.#tokenPrefix[at + 1] as number) - this.#cost(at);
  }

  /** `wellFormedHistory` of the kept history (a new array each call: the caller may keep it). */
  wellFormed(): ChatMessage[] {
    if (this.#openBlock >= 0) this.#decide(this.#openBlock); // results may have arrived since
    let i = this.#start;
    // Results at the start lost their call (or follow the pinned question): dropped.
    while (i < this.#all.length && toolResultIdOf(this.#all[i] as ChatMessage) !== undefined) i++;
    const first = i;
    let out: ChatMessage[] = [];
    let stableCount = 0;
    // What the last call sent for messages up to the last open block is final: only the window's
    // start moved, and messages were added after.
    const last = this.#lastSent;
    if (last && last.pinned === this.#pinned && last.first <= i && i <= last.stableUpTo) {
      const skip = this.#pinned === undefined ? 0 : 1;
      let from = 0;
      for (let p = last.first; p < i; p++) if (this.#sent[p]) from++;
      out = last.out.slice(from + skip, last.stableCount + skip);
      stableCount = last.stableCount - from;
      i = last.stableUpTo;
    }
    if (this.#pinned !== undefined) out.unshift(this.#all[this.#pinned] as ChatMessage); // a question: kept as it is
    const tail = i;
    for (; i < this.#all.length; i++) {
      const sent = this.#sentAt(i);
      if (sent) {
        out.push(sent);
        stableCount++;
      }
    }
    // Deciding may have opened a block at the end: what it sent is not final.
    const stableUpTo = this.#openBlock >= 0 ? this.#openBlock : this.#all.length;
    for (let p = Math.max(stableUpTo, tail); p < this.#all.length; p++) if (this.#sent[p]) stableCount--;
    this.#lastSent = { out, pinned: this.#pinned, first, stableUpTo, stableCount };
    return out;
  }

  #bytesBetween(from: number, to: number): number {
    return (this.#bytePrefix[to] as number) - (this.#bytePrefix[from] as number);
  }

  #cost(i: number): number {
    // Counted up to the limit: past it, any count over it decides as the exact one would.
    return (this.#costs[i] ||= messageTokens(this.#all[i] as ChatMessage, this.#limit) + 1);
  }

  /** What message `i` (not a leading result) contributes: wellFormedHistory's decision for its tool-call block. */
  #sentAt(i: number): Sent {
    let sent = this.#sent[i];
    if (sent === undefined) {
      // The block of the nearest call before i (results follow their call directly).
      let call = i;
      while (call > 0 && toolCallsOf(this.#all[call] as ChatMessage).length === 0 && toolResultIdOf(this.#all[call] as ChatMessage) !== undefined) call--;
      this.#decide(toolCallsOf(this.#all[call] as ChatMessage).length > 0 ? call : i);
      sent = this.#sent[i] as Sent;
    }
    return sent;
  }

  /** Decides the block starting at `start`: a plain message, a result with no call before it, or a call with its results. */
  #decide(start: number): void {
    const message = this.#all[start] as ChatMessage;
    const calls = toolCallsOf(message);
    if (calls.length === 0) {
      this.#sent[start] = toolResultIdOf(message) === undefined ? message : null;
      return;
    }
    let end = start + 1;
    while (end < this.#all.length && toolResultIdOf(this.#all[end] as ChatMessage) !== undefined) end++;
    // A block that reaches the newest message may still get results: decided again when read.
    this.#openBlock = end === this.#all.length ? start : this.#openBlock === start ? -1 : this.#openBlock;
    // A block holds a few calls and their results, and is decided again as results arrive:
    // searched in place rather than through two Sets made for each decision.
    const complete = calls.every((call) => this.#answered(call.id, start + 1, end));
    this.#sent[start] = complete
      ? message
      : message.content !== "" && typeof message.content === "string"
        ? { role: "assistant", content: message.content }
        : null;
    for (let i = start + 1; i < end; i++) {
      const result = this.#all[i] as ChatMessage;
      const id = toolResultIdOf(result);
      this.#sent[i] = complete && calls.some((call) => call.id === id) ? result : null;
    }
  }

  /** Whether a result among messages `from` to `to` - 1 answers the call `id`. */
  #answered(id: string, from: number, to: number): boolean {
    for (let i = from; i < to; i++) if (toolResultIdOf(this.#all[i] as ChatMessage) === id) return true;
    return false;
  }
}

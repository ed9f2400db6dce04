/**
 * The interface between `Sessions` and the workflow it runs: the workflow says how its
 * conversation is kept in a saved context, so that `Sessions` can store the messages one row
 * each and load back only the newest the next turn reads. `Sessions` knows no store key and no
 * codec of any workflow; the `FunctionCallingAgent` supplies one (workflows/agent-sessions.ts).
 */
import type { Context, ContextJSON, Json } from "../core/internal.ts";
import { SessionStoreError } from "./types.ts";

/**
 * A run of a session's stored messages, as `Sessions` hands it to a workflow: the newest ones,
 * possibly not the whole history.
 * @example
 * const window: MessageWindow = { messages: [{ role: "user", content: "Hi" }], firstSeq: 7, total: 7 };
 * const whole = window.firstSeq === 1; // false: messages #1 to #6 were not loaded
 */
export interface MessageWindow {
  /** The stored messages, parsed, oldest first. */
  readonly messages: readonly Json[];
  /** The seq of `messages[0]` (the first message of a session is #1), or `total + 1` if there are none. */
  readonly firstSeq: number;
  /** How many messages the session has stored in all; `messages` are the newest of them. */
  readonly total: number;
}

/**
 * How a workflow's conversation is stored by `Sessions`. A session is a context snapshot
 * without the messages, plus the messages appended one row each; a turn loads the snapshot and
 * the newest messages, restores the context from both, runs, and saves the snapshot again with
 * the messages the turn added.
 * @example
 * // A workflow that keeps its chat in ctx.store "chat" as a plain array of messages:
 * const chatMemory: SessionMemory = {
 *   initialWindow: 20,
 *   more: (window) => (window.messages.length < 20 ? 20 : 0), // the last 20 messages are all it reads
 *   restore: (snapshot, window) => ({ ...snapshot, store: { ...snapshot.store, chat: [...window.messages] } }),
 *   save: (saved, window) => {
 *     const chat = saved.store.chat as Json[];
 *     return { snapshot: { ...saved, store: { ...saved.store, chat: [] } }, append: chat.slice(window.messages.length) };
 *   },
 * };
 */
export interface SessionMemory {
  /** How many of the newest messages a turn loads first (a whole number ≥ 0). */
  readonly initialWindow: number;
  /**
   * How many older messages the next turn still needs besides `window` (0: none). `Sessions`
   * loads them, prepends them and asks again, until this says 0 or the history is all loaded;
   * it is not asked once `window` holds the whole history.
   */
  more(window: MessageWindow): number;
  /** The context to restore: `snapshot` (as `save` returned it) with `window`'s messages put back. */
  restore(snapshot: ContextJSON, window: MessageWindow): ContextJSON;
  /**
   * Splits the context saved after a turn, restored from `window`, into the snapshot to store
   * (without the messages) and the messages the turn added, to append after `window`'s.
   * Sessions only append: a turn that removed loaded messages cannot be saved (throw).
   */
  save(saved: ContextJSON, window: MessageWindow): { readonly snapshot: ContextJSON; readonly append: readonly Json[] };
  /**
   * Optional: what `save(ctx.toJSON(), window)` returns, made from the context itself, so that
   * a workflow can leave out of the encoding the messages `window` put back (they are stored
   * already): with it, saving a turn costs its new messages, not the window. `Sessions` calls it
   * instead of `save` when it is there. Each message of `append` is stored as `JSON.stringify`
   * writes it, so it may be the workflow's own object (a `Date` in it is written as its ISO
   * string), with no JSON copy made first.
   */
  saveContext?(ctx: Context, window: MessageWindow): { readonly snapshot: ContextJSON; readonly append: readonly Json[] };
}

/**
 * A workflow that says how `Sessions` stores its conversation (the `FunctionCallingAgent` does).
 * @example
 * class ChatWorkflow extends Workflow<{ input: string }, string> implements SessionAware {
 *   readonly sessionMemory = chatMemory;
 * }
 */
export interface SessionAware {
  readonly sessionMemory: SessionMemory;
}

/**
 * For a workflow that supplies no `SessionMemory`: the whole context is the snapshot, saved
 * again every turn, and no messages are stored one by one. Fine while the context stays small;
 * a workflow whose context grows with the conversation should supply its own.
 * @example
 * new Sessions(myWorkflow, store, { memory: wholeContextMemory });
 */
export const wholeContextMemory: SessionMemory = {
  initialWindow: 0,
  more: () => 0,
  restore(snapshot, window) {
    if (window.total > 0) {
      throw new SessionStoreError(
        `This session has ${window.total} stored messages, but the workflow does not say where they go in its context. Run it with the workflow that saved it (such as FunctionCallingAgent), or give Sessions a SessionMemory: new Sessions(workflow, store, { memory }).`,
      );
    }
    return snapshot;
  },
  save: (saved) => ({ snapshot: saved, append: [] }),
};

/**
 * The `SessionMemory` of `workflow`: its `sessionMemory` if it has one, else {@link wholeContextMemory}.
 * @example sessionMemoryOf(agent) === agent.sessionMemory; // true for a FunctionCallingAgent
 */
export function sessionMemoryOf(workflow: object): SessionMemory {
  const memory = (workflow as Partial<SessionAware>).sessionMemory;
  if (memory === undefined) return wholeContextMemory;
  checkSessionMemory(memory);
  return memory;
}

/**
 * Throws `SessionStoreError` unless `memory` looks like a `SessionMemory`, naming what is wrong.
 * @example checkSessionMemory(agent.sessionMemory);
 */
export function checkSessionMemory(memory: SessionMemory): void {
  const problems: string[] = [];
  if (typeof memory !== "object" || memory === null) problems.push(`it is ${memory === null ? "null" : typeof memory}`);
  else {
    if (!Number.isSafeInteger(memory.initialWindow) || memory.initialWindow < 0)
      problems.push(`initialWindow must be a whole number ≥ 0, got ${String(memory.initialWindow)}`);
    for (const name of ["more", "restore", "save"] as const) if (typeof memory[name] !== "function") problems.push(`${name} must be a function`);
    if (memory.saveContext !== undefined && typeof memory.saveContext !== "function") problems.push("saveContext must be a function if given");
  }
  if (problems.length > 0) throw new SessionStoreError(`Not a SessionMemory: ${problems.join("; ")}. See docs/sessions.md, "The workflow's side".`);
}

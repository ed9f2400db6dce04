/** Sessions in this process's memory: for tests, notebooks and `--store memory:`. */
import { SessionConflictError, checkRange, checkSave, checkSessionId, listLimit, loadedRange } from "./types.ts";
import type { LoadOptions, MessageRange, SessionRecord, SessionSave, SessionStore, SessionSummary, StoredMessage } from "./types.ts";

/**
 * @example
 * const sessions = new Sessions(agent, new MemorySessionStore());
 */
export class MemorySessionStore implements SessionStore {
  readonly description = "memory (this process only)";
  readonly #sessions = new Map<string, SessionRecord>();

  async load(id: string, options: LoadOptions = {}): Promise<SessionRecord | undefined> {
    checkSessionId(id);
    const record = this.#sessions.get(id);
    if (!record) return undefined;
    const { from } = loadedRange(record.messageCount, options);
    return { ...record, messages: record.messages.slice(from - 1) };
  }

  async readMessages(id: string, range: MessageRange): Promise<StoredMessage[]> {
    checkSessionId(id);
    checkRange(range);
    const messages = this.#sessions.get(id)?.messages ?? [];
    return messages.slice(range.from - 1, Math.max(range.from - 1, range.to));
  }

  async save(id: string, save: SessionSave): Promise<number> {
    checkSave(id, save);
    const current = this.#sessions.get(id);
    if ((current?.version ?? 0) !== save.expectedVersion) throw new SessionConflictError(id, save.expectedVersion, current?.version);
    const now = new Date();
    // Appended in place (loads hand out copies): a save costs its new messages, not the history.
    const messages = current?.messages ?? [];
    for (const json of save.append) messages.push({ seq: messages.length + 1, json, createdAt: now });
    const version = save.expectedVersion + 1;
    this.#sessions.set(id, {
      id,
      version,
      snapshot: save.snapshot,
      messages,
      messageCount: messages.length,
      createdAt: current?.createdAt ?? now,
      updatedAt: now,
    });
    return version;
  }

  async list(options: { limit?: number } = {}): Promise<SessionSummary[]> {
    const limit = listLimit(options);
    return [...this.#sessions.values()]
      .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime())
      .slice(0, limit)
      .map(({ id, version, messages, createdAt, updatedAt }) => ({ id, version, messageCount: messages.length, createdAt, updatedAt }));
  }

  async delete(id: string): Promise<boolean> {
    checkSessionId(id);
    return this.#sessions.delete(id);
  }

  async close(): Promise<void> {}
}

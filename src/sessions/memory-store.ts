/** Sessions in this process's memory: for tests, notebooks and `--store memory:`. */
import { SessionConflictError, checkSave, checkSessionId, listLimit } from "./types.ts";
import type { SessionRecord, SessionSave, SessionStore, SessionSummary } from "./types.ts";

/**
 * @example
 * const sessions = new Sessions(agent, new MemorySessionStore());
 */
export class MemorySessionStore implements SessionStore {
  readonly description = "memory (this process only)";
  readonly #sessions = new Map<string, SessionRecord>();

  async load(id: string): Promise<SessionRecord | undefined> {
    checkSessionId(id);
    const record = this.#sessions.get(id);
    return record && { ...record, messages: [...record.messages] };
  }

  async save(id: string, save: SessionSave): Promise<number> {
    checkSave(id, save);
    const current = this.#sessions.get(id);
    if ((current?.version ?? 0) !== save.expectedVersion) throw new SessionConflictError(id, save.expectedVersion, current?.version);
    const now = new Date();
    const messages = [...(current?.messages ?? [])];
    for (const json of save.append) messages.push({ seq: messages.length + 1, json, createdAt: now });
    const version = save.expectedVersion + 1;
    this.#sessions.set(id, { id, version, snapshot: save.snapshot, messages, createdAt: current?.createdAt ?? now, updatedAt: now });
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

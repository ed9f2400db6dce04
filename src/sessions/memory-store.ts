/** Sessions in this process's memory: for tests, notebooks and `--store memory:`. */
import { SessionConflictError, checkRange, checkSave, checkSessionId, deleteVersion, listLimit, listPrefix, loadedRange } from "./types.ts";
import type {
  DeleteOptions,
  ListOptions,
  LoadOptions,
  MessageRange,
  SessionRecord,
  SessionSave,
  SessionStore,
  SessionSummary,
  StoredMessage,
} from "./types.ts";

/**
 * What the store keeps of a session: one object, its times as numbers and no messages' array
 * until it has a message. A server on this store keeps every run it served this way, and each
 * object kept is one more for the garbage collector to copy and mark for the life of the process.
 */
interface Kept {
  version: number;
  snapshot: string;
  messages: StoredMessage[] | undefined;
  createdAt: number;
  updatedAt: number;
}

/**
 * @example
 * const sessions = new Sessions(agent, new MemorySessionStore());
 */
export class MemorySessionStore implements SessionStore {
  readonly description = "memory (this process only)";
  readonly #sessions = new Map<string, Kept>();

  async load(id: string, options: LoadOptions = {}): Promise<SessionRecord | undefined> {
    checkSessionId(id);
    const kept = this.#sessions.get(id);
    if (!kept) return undefined;
    const messageCount = kept.messages?.length ?? 0;
    const { from } = loadedRange(messageCount, options);
    return {
      id,
      version: kept.version,
      snapshot: kept.snapshot,
      messages: kept.messages ? kept.messages.slice(from - 1) : [],
      messageCount,
      createdAt: new Date(kept.createdAt),
      updatedAt: new Date(kept.updatedAt),
    };
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
    const now = Date.now();
    let messages = current?.messages;
    if (save.append.length > 0) {
      // Appended in place (loads hand out copies): a save costs its new messages, not the history.
      messages ??= [];
      const at = new Date(now);
      for (const json of save.append) messages.push({ seq: messages.length + 1, json, createdAt: at });
    }
    const version = save.expectedVersion + 1;
    if (current) {
      current.version = version;
      current.snapshot = save.snapshot;
      current.messages = messages;
      current.updatedAt = now;
    } else {
      this.#sessions.set(id, { version, snapshot: save.snapshot, messages, createdAt: now, updatedAt: now });
    }
    return version;
  }

  async list(options: ListOptions = {}): Promise<SessionSummary[]> {
    const limit = listLimit(options);
    const prefix = listPrefix(options);
    return [...this.#sessions]
      .filter(([id]) => prefix === undefined || id.startsWith(prefix))
      .sort((a, b) => b[1].updatedAt - a[1].updatedAt)
      .slice(0, limit)
      .map(([id, { version, messages, createdAt, updatedAt }]) => ({
        id,
        version,
        messageCount: messages?.length ?? 0,
        createdAt: new Date(createdAt),
        updatedAt: new Date(updatedAt),
      }));
  }

  async delete(id: string, options: DeleteOptions = {}): Promise<boolean> {
    checkSessionId(id);
    const version = deleteVersion(options);
    if (version !== undefined && this.#sessions.get(id)?.version !== version) return false;
    return this.#sessions.delete(id);
  }

  async close(): Promise<void> {}
}

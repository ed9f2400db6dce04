/** A session store that counts the stored messages it hands out, by load and by range: what a turn reads. */
import type { SessionStore } from "../../src/sessions/types.ts";

/**
 * Wraps `store`; `read()` is the number of stored messages loaded or read since.
 * @example const { store: counted, read } = countingReads(store); … expect(read()).toBe(1);
 */
export function countingReads(store: SessionStore): { store: SessionStore; read: () => number } {
  let read = 0;
  const counted: SessionStore = {
    description: store.description,
    journal: store.journal,
    load: async (id, options) => {
      const record = await store.load(id, options);
      read += record?.messages.length ?? 0;
      return record;
    },
    readMessages: async (id, range) => {
      const messages = await store.readMessages(id, range);
      read += messages.length;
      return messages;
    },
    save: (id, save) => store.save(id, save),
    list: (options) => store.list(options),
    delete: (id) => store.delete(id),
    close: () => store.close(),
  };
  return { store: counted, read: () => read };
}

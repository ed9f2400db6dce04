/** A session store that takes a server's saves of a run until the run has ended, as a disk that fills up would. */
import { MemorySessionStore } from "../../src/sessions/memory-store.ts";
import type { SessionSave } from "../../src/sessions/types.ts";

/** Whether `save` is the save of a run's end (a handler that succeeded). */
export const isEndOfRun = (save: SessionSave): boolean => save.snapshot.includes('"status":"succeeded"');

/** Takes a run's start and refuses its end with SQLite's "disk is full". */
export class FullDiskStore extends MemorySessionStore {
  override async save(id: string, save: SessionSave): Promise<number> {
    if (isEndOfRun(save)) throw new Error("SQLITE_FULL: database or disk is full");
    return super.save(id, save);
  }
}

/** Opens the session store a URL names: what the CLI's `--store` and `DATABASE_URL` mean. */
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { MemorySessionStore } from "./memory-store.ts";
import { PostgresSessionStore } from "./postgres-store.ts";
import { SqliteSessionStore } from "./sqlite-store.ts";
import { SessionStoreError } from "./types.ts";
import type { SessionStore } from "./types.ts";

/** The store used when none is named: a SQLite file in the working directory. */
export const DEFAULT_SESSION_STORE = "sqlite:.stepflow/sessions.db";

/**
 * @example
 * await openSessionStore();                                // SQLite .stepflow/sessions.db
 * await openSessionStore("sqlite:/var/lib/app/chat.db");
 * await openSessionStore(process.env.DATABASE_URL);        // postgres://…
 * await openSessionStore("memory:");
 */
export async function openSessionStore(url: string = DEFAULT_SESSION_STORE): Promise<SessionStore> {
  if (url === "memory:") return new MemorySessionStore();
  if (/^postgres(ql)?:\/\//.test(url)) return PostgresSessionStore.open(url);
  const sqlite = /^(?:sqlite|file):(.+)$/.exec(url);
  if (sqlite?.[1]) {
    const path = sqlite[1].replace(/^\/\/(?=\/)/, ""); // sqlite:///abs/path as well as sqlite:/abs/path
    await mkdir(dirname(path), { recursive: true });
    return SqliteSessionStore.open(path);
  }
  throw new SessionStoreError(`Unknown session store ${JSON.stringify(url)}. Use sqlite:PATH (default ${DEFAULT_SESSION_STORE}), postgres://USER:PASSWORD@HOST:PORT/DB, or memory:.`);
}

/** Opens the session store a URL names: what the CLI's `--store` and `DATABASE_URL` mean. */
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { MemorySessionStore } from "./memory-store.ts";
import { PostgresSessionStore } from "./postgres-store.ts";
import { SqliteSessionStore } from "./sqlite-store.ts";
import { maskCredentials, quoteInput } from "../core/internal.ts";
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
  const kind = sessionStoreKind(url);
  if (kind === "memory") return new MemorySessionStore();
  if (kind === "postgres") return PostgresSessionStore.open(url);
  // If the folder cannot be made (a file in the way, no permission), opening fails next and says why.
  await mkdir(dirname(kind.sqlite), { recursive: true }).catch(() => {});
  return SqliteSessionStore.open(kind.sqlite);
}

/**
 * Which store a URL names, without opening it; `SessionStoreError` for a URL no store takes
 * (so a command line can report it as a usage mistake before doing anything).
 * @example sessionStoreKind("sqlite:///var/chat.db") // { sqlite: "/var/chat.db" }
 */
export function sessionStoreKind(url: string): "memory" | "postgres" | { readonly sqlite: string } {
  if (url === "memory:") return "memory";
  if (/^postgres(ql)?:\/\//.test(url)) return "postgres";
  const sqlite = /^(?:sqlite|file):(.+)$/.exec(url);
  if (sqlite?.[1]) return { sqlite: sqlite[1].replace(/^\/\/(?=\/)/, "") }; // sqlite:///abs/path as well as sqlite:/abs/path
  throw new SessionStoreError(
    `Unknown session store ${quoteInput(maskCredentials(url), 80)}. Use sqlite:PATH (default ${DEFAULT_SESSION_STORE}), postgres://USER:PASSWORD@HOST:PORT/DB, or memory:.`,
  );
}

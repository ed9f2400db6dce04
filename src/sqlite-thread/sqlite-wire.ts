/**
 * The messages between `SqliteThread` (the main thread) and its worker (sqlite-worker.js):
 * plain data only, as `postMessage` copies it. Types only; nothing here runs.
 */
import type { Config, Value } from "@libsql/client";

/** The client methods that cross to the worker: each takes and returns plain data. @example const method: ForwardedMethod = "batch"; */
export type ForwardedMethod = "execute" | "batch" | "executeMultiple" | "migrate";

/** A request to the worker; `id` pairs it with its reply. @example const request: SqliteRequest = { id: 1, op: "call", method: "execute", args: ["SELECT 1"] }; */
export type SqliteRequest =
  /** `driver`: the URL of `@libsql/client` as the main thread resolves it, so both load the same one. */
  | { readonly id: number; readonly op: "open"; readonly config: Config; readonly driver: string }
  | { readonly id: number; readonly op: "call"; readonly method: ForwardedMethod; readonly args: readonly unknown[] }
  | { readonly id: number; readonly op: "close" };

/** A `ResultSet` as data: each row as an array of its values, in `columns` order. @example const result: WireResult = { columns: ["n"], columnTypes: [""], rows: [[1]], rowsAffected: 0, lastInsertRowid: undefined }; */
export interface WireResult {
  readonly columns: string[];
  readonly columnTypes: string[];
  readonly rows: Value[][];
  readonly rowsAffected: number;
  readonly lastInsertRowid: bigint | undefined;
}

/** An error as data: the fields `LibsqlError` and `LibsqlBatchError` carry. @example const error: WireError = { name: "LibsqlError", message: "SQLITE_BUSY: database is locked", code: "SQLITE_BUSY", rawCode: 5 }; */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly code?: string;
  readonly extendedCode?: string;
  readonly rawCode?: number;
  readonly statementIndex?: number;
  readonly cause?: WireError;
}

/** The worker's answer to one request. @example const reply: SqliteReply = { id: 1, ok: true, value: null }; */
export type SqliteReply =
  | { readonly id: number; readonly ok: true; readonly value: WireResult | WireResult[] | null }
  | { readonly id: number; readonly ok: false; readonly error: WireError };

/**
 * An `@libsql/client` connection that lives in a worker thread. libsql runs a local file's
 * statements synchronously, on whichever thread calls it; on the application's thread a
 * save that waits for another process's write lock, or a long history read, stalls every
 * other request. Here the worker blocks instead, and the application only awaits.
 *
 * The requests of one turn of the event loop travel as one message, and the worker runs those
 * that arrive together in one transaction (see sqlite-worker.js). Its replies come back together
 * too, and are handed to their callers a few per turn of the event loop: a thousand sessions'
 * loads answered at once start a thousand turns, and run in one stretch they held up every timer
 * (and every other request) for a third of a second.
 *
 * Statements keep their order (one worker, one connection, requests answered in turn); results
 * and errors come back as `@libsql/client`'s own `ResultSet` rows and `LibsqlError` classes,
 * with the same messages, so code written against a `Client` works unchanged.
 */
import { Worker } from "node:worker_threads";
import type { Client, Config, InArgs, InStatement, ResultSet, Row, TransactionMode } from "@libsql/client";
import type { ForwardedMethod, SqliteReply, SqliteRequest, WireError, WireResult } from "./sqlite-wire.ts";
import { sqliteWorkerSource } from "./sqlite-worker-source.ts";

type Driver = typeof import("@libsql/client");

/**
 * What the store that opens a thread says in its own terms: where `@libsql/client` is, and the
 * errors of a missing driver and of a stopped worker (a session store and a journal each have
 * their own classes of errors, and this folder imports neither).
 * @example
 * const setup: SqliteThreadSetup = { driverURL: () => import.meta.resolve("@libsql/client"), loadDriver: () => import("@libsql/client"), stopped: (d) => new Error(`${d} stopped`) };
 */
export interface SqliteThreadSetup {
  /** The driver's module URL, for the worker to load it; throws the store's error when it is not installed. */
  readonly driverURL: () => string;
  /** The driver on this thread (for its classes of errors); rejects with the store's error when it is not installed. */
  readonly loadDriver: () => Promise<Driver>;
  /** The error of the calls waiting for a worker that stopped, and of every later call. */
  readonly stopped: (description: string, exitCode: number | undefined, options?: { cause?: unknown }) => Error;
}
type Pending = { resolve: (value: WireResult | WireResult[] | null) => void; reject: (error: unknown) => void };

/**
 * A `@libsql/client` `Client` for a local file whose statements run in a worker thread.
 * @example
 * const db = await SqliteThread.open({ url: "file:chat.db", timeout: 5000 }, "SQLite chat.db");
 * const { rows } = await db.execute({ sql: "SELECT ? AS answer", args: [42] });
 * rows[0]?.answer; // 42
 * await db.close();
 */
export class SqliteThread implements Pick<Client, ForwardedMethod> {
  readonly #worker: Worker;
  /** The driver on this thread, for its error classes: loaded on the first error, as loading it costs as much as starting the worker. */
  #driverLoaded: Promise<Driver> | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  /** Requests not yet posted: they go as one message per turn of the event loop. */
  #outbox: SqliteRequest[] = [];
  /** Replies received and not yet handed to their callers (from `#inboxAt` on). */
  #inbox: SqliteReply[] = [];
  #inboxAt = 0;
  #stopped: Error | undefined;
  readonly #setup: SqliteThreadSetup;
  #closing: Promise<void> | undefined;
  readonly #exited: Promise<void>;

  private constructor(description: string, setup: SqliteThreadSetup) {
    this.#setup = setup;
    this.#worker = startWorker();
    let failure: unknown;
    this.#worker.on("error", (error) => (failure = error));
    this.#worker.on("message", (replies: SqliteReply[]) => {
      const idle = this.#inboxAt === this.#inbox.length;
      if (idle) [this.#inbox, this.#inboxAt] = [replies, 0];
      else for (const reply of replies) this.#inbox.push(reply);
      if (idle) this.#deliver();
    });
    this.#exited = new Promise((resolve) => {
      this.#worker.on("exit", (code) => {
        this.#deliver(Infinity); // what the worker answered before it stopped stands
        this.#stopped ??= setup.stopped(description, failure === undefined ? code : undefined, failure === undefined ? undefined : { cause: failure });
        for (const waiting of this.#pending.values()) waiting.reject(this.#stopped);
        this.#pending.clear();
        resolve();
      });
    });
    // Idle, the worker does not keep the process alive (as an open libsql client does not).
    this.#worker.unref();
  }

  /**
   * Starts the worker and opens `config` (a `file:` URL) in it. `description` names the store
   * in errors. `setup`'s error if `@libsql/client` is not installed; the `LibsqlError` of
   * `createClient` if the file cannot be opened.
   */
  static async open(config: Config, description: string, setup: SqliteThreadSetup): Promise<SqliteThread> {
    // Only the worker loads the driver (this thread needs it only for the classes of errors): loading
    // it on both doubled the time to open a store. This thread checks that it is installed.
    const driver = setup.driverURL();
    const thread = new SqliteThread(description, setup);
    try {
      await thread.#send({ op: "open", config, driver });
    } catch (error) {
      await thread.close();
      throw error;
    }
    return thread;
  }

  execute(statement: InStatement): Promise<ResultSet>;
  execute(sql: string, args?: InArgs): Promise<ResultSet>;
  async execute(...args: unknown[]): Promise<ResultSet> {
    return this.#call("execute", args) as Promise<ResultSet>;
  }

  async batch(statements: InStatement[], mode?: TransactionMode): Promise<ResultSet[]> {
    return this.#call("batch", [statements, mode]) as Promise<ResultSet[]>;
  }

  async executeMultiple(sql: string): Promise<void> {
    await this.#call("executeMultiple", [sql]);
  }

  async migrate(statements: InStatement[]): Promise<ResultSet[]> {
    return this.#call("migrate", [statements]) as Promise<ResultSet[]>;
  }

  /** Whether `close()` was called or the worker stopped. */
  get closed(): boolean {
    return this.#closing !== undefined || this.#stopped !== undefined;
  }

  /** Closes the connection and ends the worker; resolves when the thread has exited. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#worker.ref(); // until it has exited: a process awaiting close() must not end first
      if (!this.#stopped) await this.#send({ op: "close" }).catch(() => {});
      await this.#exited;
    })();
    return this.#closing;
  }

  /**
   * Ends the worker at once, as a crash would: waiting calls fail with the setup's `stopped` error.
   * @internal For tests of what a crashed worker does to its callers.
   */
  async terminateForTest(): Promise<void> {
    await this.#worker.terminate();
  }

  async #call(method: ForwardedMethod, args: readonly unknown[]): Promise<ResultSet | ResultSet[] | undefined> {
    // As libsql's own client says once it is closed.
    if (this.#closing) throw new (await this.#driver()).LibsqlError("The client is closed", "CLIENT_CLOSED");
    const value = await this.#send({ op: "call", method, args });
    if (value === null) return undefined;
    return Array.isArray(value) ? value.map(toResultSet) : toResultSet(value);
  }

  #send(request: DistributiveOmit<SqliteRequest, "id">): Promise<WireResult | WireResult[] | null> {
    if (this.#stopped) return Promise.reject(this.#stopped);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref(); // an awaited answer keeps the process alive
      this.#pending.set(id, { resolve, reject });
      if (this.#outbox.length === 0) setImmediate(() => this.#post());
      this.#outbox.push({ ...request, id } as SqliteRequest);
    });
  }

  #post(): void {
    const requests = this.#outbox;
    this.#outbox = [];
    if (this.#stopped) return; // the pending calls were rejected when the worker stopped
    this.#worker.postMessage(requests);
  }

  #driver(): Promise<Driver> {
    return (this.#driverLoaded ??= this.#setup.loadDriver());
  }

  /** Hands `count` replies to their callers; the rest wait for the next turn of the event loop, after its timers and I/O. */
  #deliver(count = REPLIES_PER_TURN): void {
    const inbox = this.#inbox;
    const end = Math.min(inbox.length, this.#inboxAt + count);
    while (this.#inboxAt < end) this.#answered(inbox[this.#inboxAt++] as SqliteReply);
    if (this.#inboxAt < inbox.length) setImmediate(() => this.#deliver());
    else [this.#inbox, this.#inboxAt] = [[], 0];
  }

  #answered(reply: SqliteReply): void {
    const waiting = this.#pending.get(reply.id);
    if (!waiting) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0 && !this.#closing) this.#worker.unref();
    if (reply.ok) waiting.resolve(reply.value);
    else void this.#driver().then((driver) => waiting.reject(fromWire(driver, reply.error)), waiting.reject);
  }
}

/** Replies handed to their callers per turn of the event loop: 16 turns started take a few milliseconds. */
const REPLIES_PER_TURN = 16;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * The worker is JavaScript (see sqlite-worker.js), started from its text rather than its file so
 * that a bundled application, which has no such file, starts it too (see sqlite-worker-source.ts).
 * It needs none of the process's options, and some break it (`-e` with `--input-type=module`).
 */
function startWorker(): Worker {
  workerURL ??= new URL(`data:text/javascript;base64,${Buffer.from(sqliteWorkerSource()).toString("base64")}`);
  return new Worker(workerURL, { execArgv: [] });
}
let workerURL: URL | undefined;

function toResultSet(wire: WireResult): ResultSet {
  return new ThreadResultSet(wire);
}

/**
 * A `ResultSet` made from the worker's data. A class, as libsql's own: its `toJSON` is one
 * method for all, where an object literal took a closure (and its context) per result, two a save.
 */
class ThreadResultSet implements ResultSet {
  readonly columns: string[];
  readonly columnTypes: string[];
  readonly rows: Row[];
  readonly rowsAffected: number;
  readonly lastInsertRowid: bigint | undefined;
  readonly #rows: WireResult["rows"];

  constructor(wire: WireResult) {
    this.columns = wire.columns;
    this.columnTypes = wire.columnTypes;
    this.#rows = wire.rows;
    // Most results of a turn (a save's) have no rows: they share no array, but need no map either.
    this.rows = wire.rows.length === 0 ? [] : wire.rows.map((values) => toRow(wire.columns, values));
    this.rowsAffected = wire.rowsAffected;
    this.lastInsertRowid = wire.lastInsertRowid;
  }

  toJSON(): ReturnType<ResultSet["toJSON"]> {
    return {
      columns: this.columns,
      columnTypes: this.columnTypes,
      rows: this.#rows,
      rowsAffected: this.rowsAffected,
      lastInsertRowid: this.lastInsertRowid?.toString() ?? null,
    };
  }
}

/** A row as libsql builds it: values by index (and a hidden length), and by column name. */
function toRow(columns: readonly string[], values: readonly Row[number][]): Row {
  const row: Record<string | number, unknown> = {};
  Object.defineProperty(row, "length", { value: values.length });
  values.forEach((value, i) => {
    Object.defineProperty(row, i, { value });
    const column = columns[i];
    if (column !== undefined && !Object.hasOwn(row, column)) row[column] = value;
  });
  return row as Row;
}

/** The worker's error as the class libsql would have thrown on this thread, with the same message. */
function fromWire(driver: Driver, wire: WireError): Error {
  const cause = wire.cause === undefined ? undefined : fromWire(driver, wire.cause);
  let error: Error;
  if (wire.name === "LibsqlBatchError") {
    error = new driver.LibsqlBatchError(wire.message, wire.statementIndex ?? 0, wire.code ?? "UNKNOWN", wire.extendedCode, wire.rawCode, cause);
  } else if (wire.name === "LibsqlError") {
    error = new driver.LibsqlError(wire.message, wire.code ?? "UNKNOWN", wire.extendedCode, wire.rawCode, cause);
  } else {
    error = new (wire.name === "TypeError" ? TypeError : wire.name === "RangeError" ? RangeError : Error)(
      wire.message,
      cause === undefined ? undefined : { cause },
    );
    if (error.name !== wire.name) error.name = wire.name;
  }
  error.message = wire.message; // LibsqlError prefixes the code, which the message already has
  if (wire.stack) error.stack = wire.stack;
  return error;
}

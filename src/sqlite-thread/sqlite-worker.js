/**
 * The worker thread behind `SqliteThread` (sqlite-thread.ts): it owns the `@libsql/client` connection, whose
 * statements on a local file run synchronously, so that they block this thread instead of the
 * application's event loop. It answers each request with plain data (rows as arrays, errors as
 * their fields) that the main thread turns back into `@libsql/client`'s own shapes and classes.
 *
 * Requests that arrive together run in one transaction: with many sessions at once, a commit
 * per save (a WAL append and index update each) was most of the worker's time. The callers hear
 * back only after the commit. If a write in the group fails, or the group's own transaction
 * cannot start or commit (a read-only file, another process's lock held past the busy timeout),
 * the group is rolled back and each request runs again alone, so each gets the answer it would
 * have had alone. (Writes are rare to fail; a savepoint around each, to undo only the one that
 * failed, made a turn's load and save four statements more, and each costs the worker as much
 * as a small read.) A group of reads only takes no write lock.
 *
 * JavaScript, not TypeScript: a worker does not inherit the loader hooks (tsx) of the thread
 * that starts it, and loading a TypeScript loader in every worker tripled the time to open a
 * store when running from the sources. The messages' types are in sqlite-wire.ts; the tests in
 * test/sessions/sqlite-thread.test.ts hold this file to them. `npm run build` copies it into dist/.
 */
import { createRequire } from "node:module";
import { Worker, parentPort, receiveMessageOnPort } from "node:worker_threads";
if (!parentPort) throw new Error("sqlite-worker.js runs only as a worker thread (SqliteThread starts it).");
const port = parentPort;
// @libsql/client learns that a statement returns no rows by catching the error raw(true) throws:
// two per save. Capturing a stack trace for each was a fifth of what a save's statements cost this
// thread. The stack would only show libsql's internals: an error sent back keeps the main thread's.
Error.stackTraceLimit = 0;
/** @type {import("@libsql/client").Client | undefined} */
let db;
// Each message is a list of requests (the main thread sends what it has once per turn of its
// event loop); whatever else is already queued joins them. Work is run one list at a time.
let running = Promise.resolve();
port.on("message", (first) => {
  const requests = [...first];
  for (let more = receiveMessageOnPort(port); more; more = receiveMessageOnPort(port)) requests.push(...more.message);
  running = running.then(() => handle(requests));
});
/** @param {import("./sqlite-wire.ts").SqliteRequest[]} requests */
async function handle(requests) {
  const replies = [];
  let group = [];
  let wroteAny = false;
  const flush = async () => {
    if (group.length > 0) replies.push(...(await runGroup(group)));
    group = [];
  };
  for (const request of requests) {
    if (request.op === "call" && groupable(request)) {
      group.push(request);
      wroteAny ||= !readOnly(request);
      continue;
    }
    await flush();
    replies.push(reply(request.id, await settle(() => runAlone(request))));
  }
  await flush();
  // All in one message: the main thread spreads the callers' continuations over turns of its event loop (see SqliteThread).
  port.postMessage(replies);
  if (wroteAny) wrote();
}
/**
 * @param {import("./sqlite-wire.ts").SqliteRequest} request
 * @returns {Promise<import("./sqlite-wire.ts").WireResult | import("./sqlite-wire.ts").WireResult[] | null>}
 */
async function runAlone(request) {
  switch (request.op) {
    case "open": {
      preparedOnce(request.driver);
      const { createClient } = /** @type {typeof import("@libsql/client")} */ (await import(request.driver));
      const config = request.config;
      db = createClient(config);
      if (!/:memory:|mode=memory/.test(config.url)) {
        await db.execute(`PRAGMA wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
        checkpoints = { opened: request, aside: undefined, writes: 0 };
      }
      return null;
    }
    case "close":
      await closeAside();
      db?.close();
      db = void 0;
      // Answered first, then the thread ends: its "exit" is how the main thread knows it is gone.
      setImmediate(() => port.close());
      return null;
    case "call": {
      // Any method of the client that takes and returns plain data passes through unchanged.
      const method = open()[request.method];
      return toWire(await method.apply(db, [...request.args]));
    }
  }
}
/**
 * The write-ahead log (WAL mode, which the stores set) is checkpointed on a thread of its own.
 * SQLite's automatic checkpoint runs in the commit of the connection that writes: every 1,000
 * pages it copies them into the database and syncs both files, and every save queued behind that commit waited for the
 * fsyncs (20 to 40 ms each on a VM's disk; bench/sqlite-stalls.ts). Here a second connection, in a
 * copy of this worker, takes a PASSIVE checkpoint, which never blocks this connection's writes,
 * after every `WRITES_PER_CHECKPOINT` turns that wrote, one at a time. SQLite starts the log over
 * only once a checkpoint has copied all of it, which a steady stream of writes never lets a
 * checkpoint beside it do; so once the log passes `RESTART_LOG_PAGES` (32 MB of 4 KB pages), this
 * connection checkpoints itself right after the other has: little is left to copy, and the log
 * starts over. Its automatic checkpoint stays, at `WRITER_CHECKPOINT_PAGES`, for a checkpoint
 * thread that falls behind. If that thread cannot run, this connection goes back to SQLite's
 * default (every 1,000 pages).
 * @type {{ opened: import("./sqlite-wire.ts").SqliteRequest & { op: "open" }, aside: { worker: Worker, busy: boolean, exited: Promise<unknown> } | undefined, writes: number } | undefined}
 */
let checkpoints;
const WRITES_PER_CHECKPOINT = 64;
const RESTART_LOG_PAGES = 8192;
const WRITER_CHECKPOINT_PAGES = 65_536;
const SQLITE_DEFAULT_CHECKPOINT_PAGES = 1000;
/** Counts a turn that wrote; every `WRITES_PER_CHECKPOINT`, asks the checkpoint thread for a checkpoint unless one is running. */
function wrote() {
  if (!checkpoints || ++checkpoints.writes < WRITES_PER_CHECKPOINT || checkpoints.aside?.busy) return;
  checkpoints.writes = 0;
  if (checkpoints.aside) return checkpointAside(checkpoints.aside);
  running = running.then(startAsideInWalMode, startAsideInWalMode);
}
/**
 * Starts the checkpoint thread once the database is in WAL mode (a store sets it as it opens).
 * In a rollback journal's mode there is no log to copy, and the other connection's reads would
 * hold a lock that makes this connection's commits fail with SQLITE_BUSY.
 */
async function startAsideInWalMode() {
  const mode = await db?.execute("PRAGMA journal_mode").then(
    (result) => String(result.rows[0]?.[0]).toLowerCase(),
    () => undefined,
  );
  if (!checkpoints || checkpoints.aside || mode !== "wal") return; // asked again after as many writes
  checkpointAside((checkpoints.aside = startAside(checkpoints.opened)));
}
/** Asks the checkpoint thread for a PASSIVE checkpoint. */
function checkpointAside(aside) {
  aside.busy = true;
  aside.worker.postMessage([{ id: 1, op: "call", method: "execute", args: ["PRAGMA wal_checkpoint(PASSIVE)"] }]);
}
/** A copy of this worker with a connection of its own to the same file, for checkpoints only. */
function startAside(opened) {
  const worker = new Worker(new URL(import.meta.url), { execArgv: [] });
  const aside = { worker, busy: false, exited: new Promise((resolve) => worker.once("exit", resolve)) };
  worker.unref(); // it never keeps the process alive: this thread's own lifetime decides
  worker.postMessage([{ id: 0, op: "open", config: opened.config, driver: opened.driver }]);
  worker.on("message", (replies) => {
    for (const answer of replies) {
      // A checkpoint that failed (another process's checkpoint held the lock) is tried again next time; a failed open is not.
      if (answer.id === 0 && !answer.ok) return void giveUpAside(aside);
      if (answer.id !== 1) continue;
      aside.busy = false;
      // PASSIVE answers [busy, frames in the log, frames copied]: a long log is started over by this connection's own checkpoint, now.
      const frames = answer.ok ? Number(answer.value?.rows?.[0]?.[1]) : 0;
      if (frames >= RESTART_LOG_PAGES) running = running.then(checkpointHere, checkpointHere);
    }
  });
  worker.on("error", () => giveUpAside(aside));
  void aside.exited.then(() => giveUpAside(aside));
  return aside;
}
/** A checkpoint on this connection: what the other left, copied in a moment, after which SQLite starts the log over. */
async function checkpointHere() {
  try {
    await db?.execute("PRAGMA wal_checkpoint(PASSIVE)");
  } catch {
    // Another process's checkpoint held the lock: the next one here will do.
  }
}
/** The checkpoint thread failed or stopped: this connection checkpoints as SQLite does by default, in its commits. */
function giveUpAside(aside) {
  if (checkpoints?.aside !== aside) return;
  checkpoints = undefined;
  void aside.worker.terminate();
  running = running.then(() => db?.execute(`PRAGMA wal_autocheckpoint = ${SQLITE_DEFAULT_CHECKPOINT_PAGES}`)).catch(() => {});
}
/** Ends the checkpoint thread (after the checkpoint it is running, if any). */
async function closeAside() {
  const aside = checkpoints?.aside;
  checkpoints = undefined;
  if (!aside) return;
  aside.worker.postMessage([{ id: 2, op: "close" }]);
  await aside.exited;
}
/** Statements kept prepared per connection: a save's append statement has one form per number of messages, up to 64. */
const PREPARED_PER_CONNECTION = 256;
let preparedOnceInstalled = false;
/**
 * Makes libsql's `Database#prepare` (the driver `@libsql/client` runs on, resolved from it) give
 * back the statement it prepared before for the same SQL on the same connection, for statements
 * that return no rows (a turn's writes: its save, its tool calls' journal entries). The client
 * prepares every statement again on each call: SQLite parsing and planning them was half of what
 * this thread spent on a turn. Reusing one is safe here: the client runs each to its end (or its
 * error) before the next call and sets its modes on each, and SQLite prepares it again itself
 * if the schema changed. A statement that returns rows is prepared each time: the client reads
 * its columns before running it, and those of one prepared before a schema change are the old
 * ones. Only this worker's copy of the class changes: each thread loads its own.
 * @param {string} driver the URL of `@libsql/client`, from which libsql is resolved
 */
function preparedOnce(driver) {
  if (preparedOnceInstalled) return;
  preparedOnceInstalled = true;
  /** @type {typeof import("libsql") | undefined} */
  let Database;
  try {
    Database = createRequire(driver)("libsql");
  } catch {
    return; // a client that runs on another driver: it works as it is, only slower
  }
  const prepare = Database?.prototype?.prepare;
  if (typeof prepare !== "function") return;
  /** @type {WeakMap<object, Map<string, import("libsql").Statement>>} */
  const byConnection = new WeakMap();
  Database.prototype.prepare = function (sql, ...rest) {
    // libsql's own calls pass more arguments (its pragma()): they go as they are.
    if (rest.length > 0 || typeof sql !== "string") return prepare.call(this, sql, ...rest);
    let statements = byConnection.get(this);
    if (!statements) byConnection.set(this, (statements = new Map()));
    const kept = statements.get(sql);
    if (kept) return kept;
    const statement = prepare.call(this, sql);
    if (statement.reader) return statement;
    answersInJavaScript(statement);
    // The oldest prepared goes first: a connection's statements are few, so a full cache is rare.
    if (statements.size >= PREPARED_PER_CONNECTION) statements.delete(statements.keys().next().value);
    statements.set(sql, statement);
    return statement;
  };
}
/**
 * The client asks each statement, before each run, for safe integers (always on) and whether it
 * returns rows (by calling `raw(true)`, which libsql answers by throwing): two calls into libsql,
 * one of them an exception made in Rust and converted, some 4 µs of a save's 35 on this thread.
 * A kept statement returns no rows and has safe integers on for good, so both are answered here.
 * @param {import("libsql").Statement} statement
 */
function answersInJavaScript(statement) {
  const { safeIntegers } = statement;
  let safe = true;
  safeIntegers.call(statement, safe);
  statement.safeIntegers = function (on) {
    if ((on ?? true) !== safe) safeIntegers.call(this, (safe = on ?? true));
    return this;
  };
  // libsql throws this whatever the argument, for any statement that returns no rows.
  statement.raw = () => {
    throw NO_ROWS;
  };
}
/** What libsql's `raw()` throws for a statement that returns no rows (the client only catches it). */
const NO_ROWS = new Error("The raw() method is only for statements that return data");
/** Statements that may share a transaction: not PRAGMAs, ATTACH, VACUUM or transaction control, which must run alone. */
const DATA_STATEMENT = /^\s*(select|insert|update|delete|replace|with)\b/i;
/** Statements that only read (a WITH may write, so it does not count). */
const READ_STATEMENT = /^\s*select\b/i;
const sqlOf = (statement) => (typeof statement === "string" ? statement : Array.isArray(statement) ? String(statement[0]) : statement.sql);
function groupable(request) {
  if (request.method === "batch") return true;
  if (request.method !== "execute") return false;
  return DATA_STATEMENT.test(sqlOf(request.args[0]));
}
/** Whether a grouped request only reads: its failure undoes nothing, and a group of them takes no write lock. */
function readOnly(request) {
  const [first] = request.args;
  return (Array.isArray(first) && request.method === "batch" ? first : [first]).every((statement) => READ_STATEMENT.test(sqlOf(statement)));
}
async function runGroup(group) {
  const alone = async () => {
    const replies = [];
    for (const request of group) replies.push(reply(request.id, await settle(() => runAlone(request))));
    return replies;
  };
  const [only] = group;
  if (group.length === 1 && only) return alone();
  const reads = group.map(readOnly);
  let tx;
  try {
    tx = await open().transaction(reads.every(Boolean) ? "deferred" : "write");
  } catch {
    return alone();
  }
  const outcomes = [];
  try {
    for (const [i, request] of group.entries()) {
      const outcome = await settle(async () => {
        // A batch's mode only chose how alone it would begin its transaction; here it is in the group's.
        const [first] = request.args;
        return toWire(Array.isArray(first) ? await tx.batch(first) : await tx.execute(first));
      });
      // A write that fails may have kept part of its batch: the whole group is undone and run again alone, below.
      if (!outcome.ok && !reads[i]) throw outcome.error;
      outcomes.push(outcome);
    }
    await tx.commit();
  } catch {
    // A write failed, or the transaction itself did (rolled back by SQLite, or the commit
    // failed): nothing of the group is kept, and each request runs again alone and gets the
    // answer it would have had alone.
    tx.close();
    return alone();
  }
  return group.map((request, i) => reply(request.id, outcomes[i]));
}
function open() {
  if (!db) throw new Error("The SQLite connection is not open.");
  return db;
}
async function settle(work) {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error };
  }
}
function reply(id, outcome) {
  return outcome.ok ? { id, ok: true, value: outcome.value } : { id, ok: false, error: errorToWire(outcome.error) };
}
function toWire(result) {
  if (result === void 0) return null;
  return Array.isArray(result) ? result.map(resultToWire) : resultToWire(result);
}
function resultToWire(result) {
  return {
    columns: result.columns,
    columnTypes: result.columnTypes,
    rows: result.rows.map((row) => Array.from(row)),
    rowsAffected: result.rowsAffected,
    lastInsertRowid: result.lastInsertRowid,
  };
}
function errorToWire(error) {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const fields = error;
  return {
    name: error.name,
    message: error.message,
    code: typeof fields.code === "string" ? fields.code : void 0,
    extendedCode: typeof fields.extendedCode === "string" ? fields.extendedCode : void 0,
    rawCode: typeof fields.rawCode === "number" ? fields.rawCode : void 0,
    statementIndex: typeof fields.statementIndex === "number" ? fields.statementIndex : void 0,
    cause: error.cause === void 0 ? void 0 : errorToWire(error.cause),
  };
}

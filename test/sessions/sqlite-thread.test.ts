/**
 * The SQLite store's worker thread: statements sent to it answer exactly as `@libsql/client`
 * answers on the calling thread (rows, counts, error classes and messages), also when many
 * arrive at once and share a transaction; closing ends the thread; a thread that dies fails
 * the calls waiting for it instead of leaving them hanging.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, LibsqlBatchError, LibsqlError } from "@libsql/client";
import type { Client, InStatement, ResultSet } from "@libsql/client";
import { afterAll, describe, expect, it, vi } from "vitest";
import { SqliteThread } from "../../src/sessions/sqlite-thread.ts";
import { SqliteThreadError } from "../../src/sessions/types.ts";
import { SqliteSessionStore } from "../../src/sessions/sqlite-store.ts";
import { SessionStoreError } from "../../src/sessions/types.ts";

const dir = mkdtempSync(join(tmpdir(), "stepflow-thread-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const newFile = () => join(dir, `db-${files++}.db`);

const SETUP: InStatement[] = [
  "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, score REAL, data BLOB)",
  { sql: "INSERT INTO t (name, score, data) VALUES (?, ?, ?)", args: ["ann", 1.5, new Uint8Array([1, 2, 3])] },
  { sql: "INSERT INTO t (name, score, data) VALUES (:name, :score, NULL)", args: { name: "bob", score: 2 } },
];

/** A result as comparable data: rows by column name and by index. */
function plain(result: ResultSet) {
  return {
    columns: result.columns,
    columnTypes: result.columnTypes,
    rowsAffected: result.rowsAffected,
    lastInsertRowid: result.lastInsertRowid,
    byName: result.rows.map((row) => Object.fromEntries(result.columns.map((c) => [c, row[c]]))),
    byIndex: result.rows.map((row) => Array.from({ length: row.length }, (_, i) => row[i])),
  };
}

/** What an error looks like to a caller. */
async function failure(work: Promise<unknown>) {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e as Error & { code?: string; rawCode?: number; statementIndex?: number },
  );
  if (!error) throw new Error("expected a failure");
  return {
    class: error.constructor.name,
    isLibsql: error instanceof LibsqlError,
    isBatch: error instanceof LibsqlBatchError,
    name: error.name,
    message: error.message,
    code: error.code,
    rawCode: error.rawCode,
    statementIndex: error.statementIndex,
  };
}

/** The same calls on a client on this thread and on a worker thread, each on a fresh file. */
async function both<T>(calls: (db: Pick<Client, "execute" | "batch">) => Promise<T>): Promise<[T, T]> {
  const local = createClient({ url: `file:${newFile()}` });
  const thread = await SqliteThread.open({ url: `file:${newFile()}` }, "SQLite test");
  try {
    return [await calls(local), await calls(thread)];
  } finally {
    local.close();
    await thread.close();
  }
}

describe("SqliteThread", () => {
  it("returns the rows, counts and ids a client on this thread returns", async () => {
    const [local, threaded] = await both(async (db) => {
      const setup = (await db.batch(SETUP, "write")).map(plain);
      const read = plain(await db.execute("SELECT id, name, score, data, name AS name FROM t ORDER BY id"));
      const args = plain(await db.execute({ sql: "SELECT ? AS a, ? AS b, ? AS c", args: [null, 9007199254740991, "x\u0000y"] }));
      const updated = plain(await db.execute({ sql: "UPDATE t SET score = score * 2 WHERE score > ?", args: [0] }));
      return { setup, read, args, updated };
    });
    expect(threaded).toEqual(local);
    expect(threaded.read.byName[0]).toEqual({ id: 1, name: "ann", score: 1.5, data: new Uint8Array([1, 2, 3]).buffer });
    expect(threaded.updated.rowsAffected).toBe(2);
  });

  it("fails with the class, message and codes a client on this thread fails with", async () => {
    const [local, threaded] = await both(async (db) => {
      await db.batch(SETUP, "write");
      return {
        syntax: await failure(db.execute("SELEC 1")),
        unique: await failure(db.execute({ sql: "INSERT INTO t (name) VALUES (?)", args: ["ann"] })),
        inBatch: await failure(
          db.batch(
            [
              { sql: "INSERT INTO t (name) VALUES (?)", args: ["cy"] },
              { sql: "INSERT INTO t (name) VALUES (?)", args: ["ann"] },
            ],
            "write",
          ),
        ),
        rolledBack: (await db.execute("SELECT count(*) AS n FROM t WHERE name = 'cy'")).rows[0]?.n,
      };
    });
    expect(threaded).toEqual(local);
    expect(threaded.unique).toMatchObject({ class: "LibsqlError", isLibsql: true, code: "SQLITE_CONSTRAINT" });
    expect(threaded.unique.message).toMatch(/^SQLITE_CONSTRAINT: UNIQUE constraint failed: t\.name$/);
    expect(threaded.inBatch).toMatchObject({ class: "LibsqlBatchError", isBatch: true, statementIndex: 1 });
    expect(threaded.rolledBack).toBe(0);
  });

  it("answers a statement run again as a client on this thread does: after its error, a schema change, and more statements than it keeps prepared", async () => {
    const [local, threaded] = await both(async (db) => {
      await db.batch(SETUP, "write");
      const insert = (name: string | null) => db.execute({ sql: "INSERT INTO t (name) VALUES (?)", args: [name] });
      const failed = [await failure(insert("ann")), await failure(insert(null))];
      const written = [plain(await insert("cy"))]; // the statement that failed twice, run again
      const star = async () => plain(await db.execute("SELECT * FROM t ORDER BY id"));
      const before = await star();
      await db.execute("ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'x'");
      written.push(plain(await insert("dee"))); // the same write, on the table as it is now
      const after = await star();
      // 300 writes of different text (more than a connection keeps prepared), then the first ones again.
      const many = [];
      for (let round = 0; round < 2; round++)
        for (let i = 0; i < 300; i += round === 0 ? 1 : 50) {
          many.push(plain(await db.execute({ sql: `UPDATE t SET score = ? + ${i} WHERE name = 'bob'`, args: [round] })).rowsAffected);
          many.push((await db.execute("SELECT score FROM t WHERE name = 'bob'")).rows[0]?.score);
        }
      return { failed, written, before, after, many, last: await star() };
    });
    expect(threaded).toEqual(local);
    expect(threaded.after.columns).toEqual(["id", "name", "score", "data", "extra"]);
    expect(threaded.after.byName.at(-1)).toMatchObject({ name: "dee", extra: "x" });
    expect(threaded.many.slice(-2)).toEqual([1, 251]);
    expect(threaded.written.map((result) => result.rowsAffected)).toEqual([1, 1]);
    expect(threaded.failed.map((failure) => failure.code)).toEqual(["SQLITE_CONSTRAINT", "SQLITE_CONSTRAINT"]);
  });

  it("answers calls made at once as if each ran alone: a failing one keeps nothing, the others keep everything", async () => {
    const [local, threaded] = await both(async (db) => {
      await db.batch(SETUP, "write");
      const insert = (name: string) => ({ sql: "INSERT INTO t (name) VALUES (?)", args: [name] });
      // Started together, so the worker receives them in one message and runs them in one transaction.
      const outcomes = await Promise.allSettled([
        db.execute(insert("c1")),
        db.batch([insert("c2"), insert("ann")], "write"), // fails on its second statement
        db.execute(insert("c3")),
        db.execute("SELECT nope FROM t"),
        db.batch([insert("c4"), { sql: "UPDATE t SET score = 7 WHERE name = ?", args: ["c4"] }], "write"),
        db.execute("SELECT name, score FROM t ORDER BY id"),
      ]);
      const settled = await Promise.all(
        outcomes.map(async (o) =>
          o.status === "fulfilled" ? (Array.isArray(o.value) ? o.value.map(plain) : plain(o.value)) : failure(Promise.reject(o.reason)),
        ),
      );
      return { settled, after: plain(await db.execute("SELECT name, score FROM t ORDER BY id")).byIndex };
    });
    expect(threaded).toEqual(local);
    expect(threaded.after).toEqual([
      ["ann", 1.5],
      ["bob", 2],
      ["c1", null],
      ["c3", null],
      ["c4", 7],
    ]);
  });

  it("answers many calls made at once a few per turn of the event loop, so timers run in between", async () => {
    const thread = await SqliteThread.open({ url: `file:${newFile()}` }, "SQLite test");
    try {
      await thread.batch(SETUP, "write");
      let answered = 0;
      let answeredBeforeTheLoopTurned: number | undefined;
      const calls = Array.from({ length: 1000 }, (_, i) =>
        thread.execute({ sql: "SELECT ? AS n, count(*) AS rows FROM t", args: [i] }).then((result) => {
          // The first answer schedules a callback for the event loop's next turn: how many answers came before it?
          if (answered++ === 0) setImmediate(() => (answeredBeforeTheLoopTurned = answered));
          return [result.rows[0]?.n, result.rows[0]?.rows];
        }),
      );
      expect(await Promise.all(calls)).toEqual(Array.from({ length: 1000 }, (_, i) => [i, 2]));
      expect(answeredBeforeTheLoopTurned).toBeGreaterThan(0);
      expect(answeredBeforeTheLoopTurned).toBeLessThan(500);
    } finally {
      await thread.close();
    }
  });

  it("answers every call made before close(), even those answered together with the close", async () => {
    const file = newFile();
    const thread = await SqliteThread.open({ url: `file:${file}` }, "SQLite test");
    await thread.batch(SETUP, "write");
    const calls = Array.from({ length: 100 }, (_, i) =>
      thread.execute({ sql: "INSERT INTO t (name) VALUES (?)", args: [`n${i}`] }).then((r) => r.rowsAffected),
    );
    await thread.close();
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 100 }, () => 1));
    const check = createClient({ url: `file:${file}` });
    expect((await check.execute("SELECT count(*) AS n FROM t")).rows[0]?.n).toBe(102);
    check.close();
  });

  it("still answers each call when the shared transaction cannot start: reads succeed, a write reports the lock", async () => {
    const file = newFile();
    const holder = createClient({ url: `file:${file}` });
    await holder.execute("PRAGMA journal_mode = WAL");
    await holder.batch(SETUP, "write");
    const thread = await SqliteThread.open({ url: `file:${file}`, timeout: 50 }, "SQLite test");
    const lock = await holder.transaction("write"); // another connection holds the write lock
    try {
      const [read, count, write] = await Promise.allSettled([
        thread.execute("SELECT name FROM t ORDER BY id"),
        thread.execute("SELECT count(*) AS n FROM t"),
        thread.execute({ sql: "INSERT INTO t (name) VALUES (?)", args: ["dan"] }),
      ]);
      expect(read.status === "fulfilled" && read.value.rows.map((r) => r.name)).toEqual(["ann", "bob"]);
      expect(write.status === "rejected" && write.reason).toBeInstanceOf(LibsqlError);
      expect(write.status === "rejected" && (write.reason as LibsqlError).code).toBe("SQLITE_BUSY");
      expect(count.status === "fulfilled" && count.value.rows[0]?.n).toBe(2);
    } finally {
      await lock.rollback();
      holder.close();
      await thread.close();
    }
  });

  it("ends the thread on close; later calls fail as a closed libsql client's do", async () => {
    const thread = await SqliteThread.open({ url: `file:${newFile()}` }, "SQLite test");
    await thread.execute("SELECT 1");
    await thread.close(); // resolves only once the worker has exited
    expect(thread.closed).toBe(true);
    const local = createClient({ url: `file:${newFile()}` });
    local.close();
    expect(await failure(thread.execute("SELECT 1"))).toEqual(await failure(local.execute("SELECT 1")));
    await thread.close(); // twice is fine
  });

  it("fails the calls waiting for a thread that died, and every later call, with SqliteThreadError", async () => {
    const thread = await SqliteThread.open({ url: `file:${newFile()}` }, "SQLite /data/chat.db");
    const waiting = [thread.execute("SELECT 1"), thread.batch(["SELECT 2"], "read")];
    await thread.terminateForTest();
    for (const call of [...waiting, thread.execute("SELECT 3")]) {
      const error = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SqliteThreadError);
      expect(error).toBeInstanceOf(SessionStoreError);
      expect((error as Error).message).toBe(
        "The worker thread of the session store SQLite /data/chat.db stopped (exit code 1). Calls waiting for it failed, and a write among them may or may not have been applied. Open the store again to continue.",
      );
    }
    await thread.close(); // a dead thread closes at once
  });
});

describe("SqliteThread's checkpoints", () => {
  it("copies what a stream of writes logs into the database file itself, before the log is anywhere near SQLite's own threshold", async () => {
    const file = newFile();
    const db = await SqliteThread.open({ url: `file:${file}`, concurrency: 1 }, "SQLite test");
    await db.execute("PRAGMA journal_mode = WAL");
    await db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT NOT NULL)");
    // 100 transactions of 200 bytes: a few dozen pages of log, where SQLite checkpoints by itself at 1,000.
    for (let i = 0; i < 100; i++) await db.execute({ sql: "INSERT INTO t (text) VALUES (?)", args: ["x".repeat(200)] });
    // The database file alone (as a backup that copies only it) has the rows once a checkpoint has copied them.
    const copy = `${file}.copy`;
    const rowsInTheFileAlone = async () => {
      copyFileSync(file, copy);
      const alone = createClient({ url: `file:${copy}` });
      try {
        return Number((await alone.execute("SELECT count(*) AS n FROM t")).rows[0]?.n);
      } catch {
        return 0; // the table itself is still only in the log
      } finally {
        alone.close();
      }
    };
    await vi.waitFor(async () => expect(await rowsInTheFileAlone()).toBeGreaterThanOrEqual(64), { timeout: 100_000, interval: 50 });
    // Closing ends the checkpoints' thread with it, and nothing is lost.
    await db.execute({ sql: "INSERT INTO t (text) VALUES (?)", args: ["last"] });
    await db.close();
    const reopened = createClient({ url: `file:${file}` });
    expect(Number((await reopened.execute("SELECT count(*) AS n FROM t")).rows[0]?.n)).toBe(101);
    reopened.close();
    // The bound is for a checkpoint that never comes: a loaded machine's slow one still passes.
  }, 120_000);
});

describe("SqliteSessionStore on its worker thread", () => {
  it("saves and loads many sessions at once, and closes its thread", async () => {
    const store = await SqliteSessionStore.open(newFile());
    const ids = Array.from({ length: 50 }, (_, i) => `s${i}`);
    await Promise.all(ids.map((id) => store.save(id, { expectedVersion: 0, snapshot: `{"n":"${id}"}`, append: [`${id}-a`, `${id}-b`] })));
    // One of these conflicts (version 1 is already taken by the first save of s0): only it fails.
    const second = await Promise.allSettled([
      ...ids.map((id) => store.save(id, { expectedVersion: 1, snapshot: "{}", append: [`${id}-c`] })),
      store.save("s0", { expectedVersion: 1, snapshot: "{}", append: ["lost"] }),
    ]);
    expect(second.filter((o) => o.status === "rejected").map((o) => (o as PromiseRejectedResult).reason.name)).toEqual(["SessionConflictError"]);
    const loaded = await Promise.all(ids.map((id) => store.load(id)));
    expect(loaded.map((r) => [r?.version, r?.messages.map((m) => m.json).join(",")])).toEqual(ids.map((id) => [2, `${id}-a,${id}-b,${id}-c`]));
    await store.close();
    await expect(store.load("s0")).rejects.toThrow(/^The session store SQLite .* failed: CLIENT_CLOSED: The client is closed\. /);
  });
});

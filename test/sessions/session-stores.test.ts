/** One contract, every store: in-memory, SQLite, and PostgreSQL when DATABASE_URL is set (CI sets it). */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer, connect } from "node:net";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { createClient } from "@libsql/client";
import pg from "pg";
import { describeOpenAIError } from "../../src/llm/openai.ts";
import { ContextSerdeError } from "../../src/core/serialize.ts";
import { CorruptSessionError, SessionConflictError, SessionStoreError } from "../../src/sessions/types.ts";
import type { SessionStore } from "../../src/sessions/types.ts";

const stores: [string, () => string][] = [
  ["memory", () => "memory:"],
  ["SQLite", () => `sqlite:${join(mkdtempSync(join(tmpdir(), "stepflow-store-")), "sessions.db")}`],
];
if (process.env.DATABASE_URL) {
  stores.push(["PostgreSQL", () => process.env.DATABASE_URL as string]);
} else {
  describe("PostgreSQL session store", () => {
    it.skip("skipped: DATABASE_URL is not set (bash .ci/run starts PostgreSQL and sets it; or export DATABASE_URL=postgres://…)", () => {});
  });
}

// Ids unique per run, so that a shared PostgreSQL database needs no cleaning between runs.
const unique = (name: string) => `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

describe.each(stores)("SessionStore contract: %s", (_name, url) => {
  let store: SessionStore;
  beforeAll(async () => {
    store = await openSessionStore(url());
  });
  afterAll(async () => {
    await store.close();
  });

  it("creates a session at version 1 and appends messages in order", async () => {
    const id = unique("alice");
    expect(await store.load(id)).toBeUndefined();
    expect(await store.save(id, { expectedVersion: 0, snapshot: "s1", append: ["m1", "m2"] })).toBe(1);
    expect(await store.save(id, { expectedVersion: 1, snapshot: "s2", append: ["m3"] })).toBe(2);
    const record = await store.load(id);
    expect(record).toMatchObject({ id, version: 2, snapshot: "s2" });
    expect(record?.messages.map((m) => [m.seq, m.json])).toEqual([
      [1, "m1"],
      [2, "m2"],
      [3, "m3"],
    ]);
    expect(record?.createdAt).toBeInstanceOf(Date);
    expect(record?.updatedAt.getTime()).toBeGreaterThanOrEqual(record?.createdAt.getTime() ?? Number.NaN);
  });

  it("rejects a save from a stale version and keeps the stored session unchanged", async () => {
    const id = unique("bob");
    await store.save(id, { expectedVersion: 0, snapshot: "s1", append: ["m1"] });
    await store.save(id, { expectedVersion: 1, snapshot: "s2", append: ["m2"] });
    const before = await store.load(id);
    const stale = store.save(id, { expectedVersion: 1, snapshot: "stale", append: ["lost?"] });
    await expect(stale).rejects.toThrow(SessionConflictError);
    await expect(stale).rejects.toThrow(`Session "${id}" was changed by another process (expected version 1, found 2). Load it again and retry the turn.`);
    await expect(store.save(id, { expectedVersion: 0, snapshot: "new", append: [] })).rejects.toThrow(SessionConflictError);
    expect(await store.load(id)).toEqual(before);
  });

  it("lets exactly one of many concurrent saves from the same version win", async () => {
    const id = unique("race");
    await store.save(id, { expectedVersion: 0, snapshot: "s1", append: [] });
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => store.save(id, { expectedVersion: 1, snapshot: `s${i}`, append: [`from ${i}`, `again ${i}`] })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const record = await store.load(id);
    const winner = results.findIndex((r) => r.status === "fulfilled");
    expect(record?.messages.map((m) => m.json)).toEqual([`from ${winner}`, `again ${winner}`]);
  });

  it("saves many sessions at once, new and continued, each applied or refused on its own", async () => {
    const ids = Array.from({ length: 150 }, (_, i) => unique(`bulk-${i}`));
    const created = await Promise.all(ids.map((id, i) => store.save(id, { expectedVersion: 0, snapshot: `v1 ${i}`, append: [`${id} a`, `${id} b`] })));
    expect(created).toEqual(ids.map(() => 1));
    const fresh = Array.from({ length: 50 }, (_, i) => unique(`bulk-new-${i}`));
    // Started together: continuations of the 150 (one from a stale version, and a second save of
    // one session in the same batch), 50 new sessions, and an existing one "created" again.
    const outcomes = await Promise.allSettled([
      ...ids.map((id, i) => store.save(id, { expectedVersion: i === 3 ? 2 : 1, snapshot: `v2 ${i}`, append: i % 2 ? [`${id} c`] : [] })),
      store.save(ids[0] as string, { expectedVersion: 1, snapshot: "twice", append: ["lost"] }),
      ...fresh.map((id) => store.save(id, { expectedVersion: 0, snapshot: "new", append: [`${id} x`, `${id} y`, `${id} z`] })),
      store.save(ids[1] as string, { expectedVersion: 0, snapshot: "again", append: ["lost"] }),
    ]);
    const failed = outcomes.flatMap((o, i) => (o.status === "rejected" ? [[i, (o.reason as SessionConflictError).found]] : []));
    expect(failed).toEqual([
      [3, 1], // stale: found version 1
      [150, 2], // the second save of ids[0] in the same batch: the first one won
      [201, 2], // ids[1] exists
    ]);
    for (const [i, id] of ids.entries()) {
      const record = await store.load(id);
      const continued = i !== 3;
      expect(record?.version).toBe(continued ? 2 : 1);
      expect(record?.snapshot).toBe(continued ? `v2 ${i}` : "v1 0".replace("0", String(i)));
      expect(record?.messages.map((m) => [m.seq, m.json])).toEqual([[1, `${id} a`], [2, `${id} b`], ...(continued && i % 2 ? [[3, `${id} c`]] : [])]);
    }
    for (const id of fresh) expect((await store.load(id))?.messages.map((m) => m.json)).toEqual([`${id} x`, `${id} y`, `${id} z`]);
  });

  it("loads only the newest messages asked for, with the count of all of them", async () => {
    const id = unique("window");
    const all = Array.from({ length: 10 }, (_, i) => `m${i + 1}`);
    await store.save(id, { expectedVersion: 0, snapshot: "s1", append: all.slice(0, 6) });
    await store.save(id, { expectedVersion: 1, snapshot: "s2", append: all.slice(6) });
    const newest = await store.load(id, { newest: 3 });
    expect(newest).toMatchObject({ version: 2, snapshot: "s2", messageCount: 10 });
    expect(newest?.messages.map((m) => [m.seq, m.json])).toEqual([
      [8, "m8"],
      [9, "m9"],
      [10, "m10"],
    ]);
    expect((await store.load(id, { newest: 0 }))?.messages).toEqual([]);
    expect((await store.load(id, { newest: 50 }))?.messages.map((m) => m.json)).toEqual(all);
    expect((await store.load(id))?.messages.map((m) => m.json)).toEqual(all);
    expect(await store.load(unique("nobody"), { newest: 3 })).toBeUndefined();
    for (const bad of [-1, 1.5, Number.NaN]) {
      await expect(store.load(id, { newest: bad })).rejects.toThrow(
        `newest must be a whole number ≥ 0 (the number of newest messages to load); got ${String(bad)}.`,
      );
    }
  });

  it("reads a range of messages by seq, up to the last one stored", async () => {
    const id = unique("range");
    await store.save(id, { expectedVersion: 0, snapshot: "s1", append: ["m1", "m2", "m3", "m4", "m5"] });
    expect((await store.readMessages(id, { from: 2, to: 4 })).map((m) => [m.seq, m.json])).toEqual([
      [2, "m2"],
      [3, "m3"],
      [4, "m4"],
    ]);
    expect((await store.readMessages(id, { from: 4, to: 99 })).map((m) => m.seq)).toEqual([4, 5]);
    expect(await store.readMessages(id, { from: 6, to: 10 })).toEqual([]);
    expect(await store.readMessages(id, { from: 3, to: 2 })).toEqual([]);
    expect(await store.readMessages(unique("nobody"), { from: 1, to: 10 })).toEqual([]);
    expect((await store.readMessages(id, { from: 1, to: 1 }))[0]?.createdAt).toBeInstanceOf(Date);
    await expect(store.readMessages(id, { from: 0, to: 3 })).rejects.toThrow(SessionStoreError);
    await expect(store.readMessages(id, { from: 0, to: 3 })).rejects.toThrow(
      'A message range is { from, to }: whole numbers, from ≥ 1 (the first message is #1); got {"from":0,"to":3}.',
    );
  });

  it("lists sessions, newest first, and deletes them with their messages", async () => {
    const a = unique("list-a");
    const b = unique("list-b");
    await store.save(a, { expectedVersion: 0, snapshot: "", append: ["1"] });
    await store.save(b, { expectedVersion: 0, snapshot: "", append: ["1", "2"] });
    await store.save(a, { expectedVersion: 1, snapshot: "", append: ["2", "3"] });
    const listed = (await store.list({ limit: 1000 })).filter((s) => s.id === a || s.id === b);
    expect(listed.map((s) => [s.id, s.messageCount, s.version])).toEqual([
      [a, 3, 2],
      [b, 2, 1],
    ]);
    expect(await store.delete(a)).toBe(true);
    expect(await store.delete(a)).toBe(false);
    expect(await store.load(a)).toBeUndefined();
    await expect(store.save(a, { expectedVersion: 2, snapshot: "", append: [] })).rejects.toThrow(
      `Session "${a}" was deleted by another process (expected version 2). Start it again.`,
    );
    expect(await store.save(a, { expectedVersion: 0, snapshot: "", append: ["fresh"] })).toBe(1);
    expect((await store.load(a))?.messages.map((m) => [m.seq, m.json])).toEqual([[1, "fresh"]]);
  });

  it("deletes at a version only: a session saved since it was read is kept, messages and all", async () => {
    const id = unique("versioned-delete");
    await store.save(id, { expectedVersion: 0, snapshot: "s1", append: ["m1"] });
    const read = await store.load(id);
    await store.save(id, { expectedVersion: 1, snapshot: "s2", append: ["m2"] });
    expect(await store.delete(id, { expectedVersion: read?.version ?? 0 })).toBe(false);
    expect(await store.load(id)).toMatchObject({ version: 2, snapshot: "s2", messageCount: 2 });
    expect((await store.load(id))?.messages.map((m) => m.json)).toEqual(["m1", "m2"]);
    expect(await store.delete(id, { expectedVersion: 2 })).toBe(true);
    expect(await store.load(id)).toBeUndefined();
    expect(await store.delete(id, { expectedVersion: 2 })).toBe(false);
    // Its messages went with it: a session made again under the id starts empty.
    expect(await store.save(id, { expectedVersion: 0, snapshot: "", append: ["fresh"] })).toBe(1);
    expect((await store.load(id))?.messages.map((m) => [m.seq, m.json])).toEqual([[1, "fresh"]]);
    await expect(store.delete(id, { expectedVersion: 0 })).rejects.toThrow(
      "expectedVersion must be a whole number ≥ 1 (the version of the session as loaded); got 0.",
    );
    expect(await store.load(id)).toMatchObject({ version: 1 });
  });

  it("appends turns of one to hundreds of messages in order, with their text exact", async () => {
    const id = unique("sizes");
    // A few messages travel as arguments of their own, many as one JSON array (the SQLite store): both must agree.
    const sizes = [1, 2, 63, 64, 65, 300];
    const all: string[] = [];
    for (const [turn, size] of sizes.entries()) {
      const append = Array.from({ length: size }, (_, i) => JSON.stringify({ role: "user", content: `turn ${turn} "message" ${i} — 🦙\n,` }));
      expect(await store.save(id, { expectedVersion: turn, snapshot: `s${turn}`, append })).toBe(turn + 1);
      all.push(...append);
    }
    const record = await store.load(id);
    expect(record).toMatchObject({ version: sizes.length, messageCount: all.length, snapshot: `s${sizes.length - 1}` });
    expect(record?.messages.map((m) => [m.seq, m.json])).toEqual(all.map((json, i) => [i + 1, json]));
    // A save that conflicts appends nothing, whatever its size.
    await expect(store.save(id, { expectedVersion: 1, snapshot: "stale", append: all.slice(0, 70) })).rejects.toThrow(SessionConflictError);
    await expect(store.save(id, { expectedVersion: 1, snapshot: "stale", append: all.slice(0, 3) })).rejects.toThrow(SessionConflictError);
    expect((await store.load(id, { newest: 0 }))?.messageCount).toBe(all.length);
  });

  it("stores any text, including quotes and unicode, exactly", async () => {
    const id = unique("text");
    const message = JSON.stringify({ role: "user", content: `It's "quoted" — 🦙 ${"\\"} end` });
    await store.save(id, { expectedVersion: 0, snapshot: '{"a":"ü"}', append: [message] });
    const record = await store.load(id);
    expect(record?.messages[0]?.json).toBe(message);
    expect(record?.snapshot).toBe('{"a":"ü"}');
  });

  it("returns each message exactly, whatever separators, commas or newlines it holds", async () => {
    const id = unique("separators");
    const messages = ["a\u001eb", "c\u001fd,e", "f\ng\r\nh", "", '["i","j"]', JSON.stringify({ role: "user", content: "k\u001el,\u001fm\nn" })];
    await store.save(id, { expectedVersion: 0, snapshot: "s\u001e1", append: messages.slice(0, 3) });
    await store.save(id, { expectedVersion: 1, snapshot: "s\u001e2", append: messages.slice(3) });
    const record = await store.load(id);
    expect(record?.messages.map((m) => [m.seq, m.json])).toEqual(messages.map((m, i) => [i + 1, m]));
    expect(record?.messages.every((m) => m.createdAt instanceof Date && !Number.isNaN(m.createdAt.getTime()))).toBe(true);
    expect(record?.snapshot).toBe("s\u001e2");
  });

  it("stores any text exactly when many sessions are saved at once", async () => {
    const texts = ["NULL", "", '{"a":"b\\"c"}', "x,y}{", "\\", '"', "ü 🦙 \u2028", " spaced ", "{NULL}", "a\nb\r\nc\t"];
    const ids = texts.map((_, i) => unique(`texts-${i}`));
    await Promise.all(ids.map((id, i) => store.save(id, { expectedVersion: 0, snapshot: texts[i] as string, append: texts })));
    await Promise.all(ids.map((id, i) => store.save(id, { expectedVersion: 1, snapshot: texts[(i + 1) % texts.length] as string, append: [] })));
    for (const [i, id] of ids.entries()) {
      const record = await store.load(id);
      expect(record).toMatchObject({ version: 2, snapshot: texts[(i + 1) % texts.length], messageCount: texts.length });
      expect(record?.messages.map((m) => m.json)).toEqual(texts);
    }
  });

  it("rejects an unusable session id with a clear error", async () => {
    await expect(store.load("")).rejects.toThrow(SessionStoreError);
    await expect(store.save("a\nb", { expectedVersion: 0, snapshot: "", append: [] })).rejects.toThrow(
      'A session id must be 1 to 200 characters without control characters; got "a\\nb".',
    );
    await expect(store.load("ok\u0085")).rejects.toThrow('A session id must be 1 to 200 characters without control characters; got "ok\u0085".'); // a C1 control character
  });

  it("rejects a session id with a lone surrogate, which the database would store as U+FFFD", async () => {
    const id = unique("lone");
    await expect(store.save(`${id}\ud800`, { expectedVersion: 0, snapshot: "", append: [] })).rejects.toThrow(
      `A session id must be well-formed Unicode (no lone surrogates); got "${id}\\ud800".`,
    );
    await expect(store.load(`${id}\udc01`)).rejects.toThrow(`A session id must be well-formed Unicode (no lone surrogates); got "${id}\\udc01".`);
    await expect(store.delete(`${id}\ud801`)).rejects.toThrow(SessionStoreError);
    expect(await store.load(`${id}\ufffd`)).toBeUndefined();
    expect(await store.save(`${id} 🦙`, { expectedVersion: 0, snapshot: "", append: [] })).toBe(1); // a pair is fine
    expect((await store.load(`${id} 🦙`))?.version).toBe(1);
  });

  it("rejects a list limit that is not a whole number ≥ 1 with a clear error", async () => {
    for (const limit of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(store.list({ limit })).rejects.toThrow(SessionStoreError);
      await expect(store.list({ limit })).rejects.toThrow(`limit must be a whole number ≥ 1 (default 100); got ${String(limit)}.`);
    }
    await store.save(unique("limit"), { expectedVersion: 0, snapshot: "", append: [] });
    expect(await store.list({ limit: 1 })).toHaveLength(1);
  });

  it("lists only the ids that start with a prefix, exactly (case, wildcards and emoji included)", async () => {
    const base = unique("prefix");
    const ids = [`${base}:🦙:a`, `${base}:🦙:b`, `${base}:🦙`, `${base.toUpperCase()}:🦙:c`, `${base}:🦊:d`, `${base}%:🦙:e`, `${base}_🦙:f`];
    for (const id of ids) await store.save(id, { expectedVersion: 0, snapshot: "", append: [] });
    await store.save(`${base}:🦙:a`, { expectedVersion: 1, snapshot: "", append: ["newer"] });
    expect((await store.list({ prefix: `${base}:🦙:`, limit: 1000 })).map((s) => s.id)).toEqual([`${base}:🦙:a`, `${base}:🦙:b`]);
    expect(await store.list({ prefix: `${base}:🦙:`, limit: 1 })).toHaveLength(1);
    expect((await store.list({ prefix: base, limit: 1000 })).map((s) => s.id).sort()).toEqual(ids.filter((id) => id.startsWith(base)).sort());
    expect(await store.list({ prefix: `${base}:🦙:z`, limit: 1000 })).toEqual([]);
    await expect(store.list({ prefix: 5 as unknown as string })).rejects.toThrow("prefix must be a string (the start of the session ids to list); got number.");
  });
});

describe("openSessionStore", () => {
  it("names the accepted forms when the URL is unknown", async () => {
    await expect(openSessionStore("redis://localhost")).rejects.toThrow(
      'Unknown session store "redis://localhost". Use sqlite:PATH (default sqlite:.stepflow/sessions.db), postgres://USER:PASSWORD@HOST:PORT/DB, or memory:.',
    );
  });

  it("reports a PostgreSQL server that is not there, without the password", async () => {
    const error = await openSessionStore("postgres://app:s3cret@127.0.0.1:1/app").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionStoreError);
    expect(String((error as Error).message)).toMatch(
      /^Cannot open the session store PostgreSQL postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/app: .*Is PostgreSQL running, and is DATABASE_URL right\?$/,
    );
    expect(String((error as Error).message)).not.toContain("s3cret");
  });
});

/** Deletes one message row behind the store's back, as a careless hand-edit or a partial restore would. */
async function deleteMessageRow(url: string, id: string, seq: number): Promise<void> {
  if (url.startsWith("sqlite:")) {
    const db = createClient({ url: `file:${url.slice("sqlite:".length)}` });
    await db.execute({ sql: "DELETE FROM stepflow_session_messages WHERE session_id = ? AND seq = ?", args: [id, seq] });
    db.close();
  } else {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query("DELETE FROM stepflow_session_messages WHERE session_id = $1 AND seq = $2", [id, seq]);
    await client.end();
  }
}

describe.each(stores.filter(([name]) => name !== "memory"))("a session with a missing message row: %s", (_name, makeURL) => {
  it.each([
    ["in the middle (a gap in seq)", 2],
    ["at the end (fewer rows than recorded)", 3],
  ])("is refused on load when the row is missing %s, naming the session, and nothing is written", async (_, seq) => {
    const url = makeURL();
    const store = await openSessionStore(url);
    try {
      const id = unique("holes");
      await store.save(id, { expectedVersion: 0, snapshot: "s1", append: ["m1", "m2", "m3"] });
      await deleteMessageRow(url, id, seq);
      const loaded = store.load(id);
      await expect(loaded).rejects.toThrow(CorruptSessionError);
      await expect(loaded).rejects.toThrow(ContextSerdeError);
      await expect(loaded).rejects.toThrow(
        `Session "${id}" is corrupt: message #${seq} is missing (2 of 3 messages are stored). The stored session was not changed; restore it from a backup, or delete it.`,
      );
      expect((await store.list({ limit: 1000 })).find((s) => s.id === id)).toMatchObject({ version: 1, messageCount: 3 });
      expect(await store.delete(id)).toBe(true); // a corrupt session can still be deleted
    } finally {
      await store.close();
    }
  });
});

describe.each(stores.filter(([name]) => name !== "memory"))("a missing message row inside what is read: %s", (_name, makeURL) => {
  it("is refused by a load of the newest messages and by a range read, naming the seq", async () => {
    const url = makeURL();
    const store = await openSessionStore(url);
    try {
      const id = unique("holes-window");
      await store.save(id, { expectedVersion: 0, snapshot: "s1", append: ["m1", "m2", "m3", "m4", "m5"] });
      await deleteMessageRow(url, id, 4);
      await expect(store.load(id, { newest: 3 })).rejects.toThrow(
        `Session "${id}" is corrupt: message #4 is missing (2 of the 3 messages #3 to #5 are stored).`,
      );
      await expect(store.readMessages(id, { from: 2, to: 9 })).rejects.toThrow(CorruptSessionError);
      expect((await store.load(id, { newest: 1 }))?.messages.map((m) => m.json)).toEqual(["m5"]); // what a turn does not read is not checked
      expect((await store.readMessages(id, { from: 1, to: 3 })).map((m) => m.json)).toEqual(["m1", "m2", "m3"]);
    } finally {
      await store.close();
    }
  });
});

describe.each(stores.filter(([name]) => name !== "memory"))("many loads at once, read together: %s", (_name, makeURL) => {
  it("gives each caller its own session, its own newest messages, and its own error", async () => {
    const url = makeURL();
    const store = await openSessionStore(url);
    try {
      const ids = Array.from({ length: 250 }, (_, i) => unique(`many-${i}`));
      await Promise.all(
        ids.map((id, i) =>
          store.save(id, { expectedVersion: 0, snapshot: `snap ${i}`, append: Array.from({ length: 1 + (i % 5) }, (_, k) => `${id} m${k + 1}`) }),
        ),
      );
      const corrupt = ids[7] as string; // 3 messages
      await deleteMessageRow(url, corrupt, 3);
      // Started in one turn of the event loop: asked of the database together, in a few statements.
      const loads = await Promise.allSettled([
        ...ids.map((id, i) => store.load(id, i % 2 === 0 ? { newest: 2 } : {})),
        store.load(unique("never-saved")),
        store.load(ids[0] as string, { newest: 0 }),
      ]);
      for (const [i, id] of ids.entries()) {
        const outcome = loads[i] as PromiseSettledResult<Awaited<ReturnType<SessionStore["load"]>>>;
        if (id === corrupt) {
          expect(outcome.status === "rejected" && outcome.reason).toBeInstanceOf(CorruptSessionError);
          continue;
        }
        const count = 1 + (i % 5);
        const newest = i % 2 === 0 ? Math.min(2, count) : count;
        expect(outcome.status === "fulfilled" && outcome.value).toMatchObject({
          id,
          version: 1,
          snapshot: `snap ${i}`,
          messageCount: count,
          messages: Array.from({ length: newest }, (_, k) =>
            expect.objectContaining({ seq: count - newest + k + 1, json: `${id} m${count - newest + k + 1}` }),
          ),
        });
      }
      expect(loads[ids.length]).toEqual({ status: "fulfilled", value: undefined });
      expect(loads[ids.length + 1]).toMatchObject({ status: "fulfilled", value: { id: ids[0], messages: [], messageCount: 1 } });
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(!process.env.DATABASE_URL)("PostgreSQL refusing one of many saves sent together", () => {
  it("fails that save alone, with PostgreSQL's reason; the others are applied", async () => {
    const store = await openSessionStore(process.env.DATABASE_URL as string);
    try {
      const ids = Array.from({ length: 20 }, (_, i) => unique(`refused-${i}`));
      // PostgreSQL text cannot hold a NUL character: the statement saving all twenty fails, and each is sent again alone.
      const outcomes = await Promise.allSettled(
        ids.map((id, i) => store.save(id, { expectedVersion: 0, snapshot: i === 5 ? "bad \u0000 snapshot" : "{}", append: [`${id} m`] })),
      );
      expect(outcomes.map((o) => o.status)).toEqual(ids.map((_, i) => (i === 5 ? "rejected" : "fulfilled")));
      const refused = outcomes[5] as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(SessionStoreError);
      expect((refused.reason as Error).message).toMatch(/^The session store PostgreSQL .* failed: invalid byte sequence for encoding "UTF8": 0x00\./);
      expect(await store.load(ids[5] as string)).toBeUndefined();
      for (const id of ids.filter((_, i) => i !== 5)) expect((await store.load(id))?.messages.map((m) => m.json)).toEqual([`${id} m`]);
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(!process.env.DATABASE_URL)("PostgreSQL going away after the store opened", () => {
  it("fails a save with a SessionStoreError naming the store, which no model-server message claims", async () => {
    // A TCP relay to the real server, closed mid-session: PostgreSQL "goes down" without touching the shared server.
    const target = new URL(process.env.DATABASE_URL as string);
    const sockets = new Set<Socket>();
    const relay = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    const url = new URL(target);
    url.port = String((relay.address() as AddressInfo).port);
    const store = await openSessionStore(url.toString());
    try {
      const id = unique("down");
      await store.save(id, { expectedVersion: 0, snapshot: "s1", append: ["m1"] });
      await new Promise<void>((resolve) => {
        relay.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      const error = await store.save(id, { expectedVersion: 1, snapshot: "s2", append: ["m2"] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SessionStoreError);
      expect((error as Error).message).toMatch(
        new RegExp(`^The session store PostgreSQL postgres://.*:${url.port}/.* failed: .*\\. Is PostgreSQL running, and is DATABASE_URL right\\?$`),
      );
      expect(describeOpenAIError(error, { baseURL: "http://127.0.0.1:11434/v1", model: "m" })).toBeUndefined();
    } finally {
      await store.close().catch(() => {});
    }
  });
});

describe("a SQLite database file that cannot be written", () => {
  it("can still be listed and loaded; a save fails with a SessionStoreError naming the file", async (context) => {
    const path = join(mkdtempSync(join(tmpdir(), "stepflow-store-")), "sessions.db");
    const writer = await openSessionStore(`sqlite:${path}`);
    await writer.save("alice", { expectedVersion: 0, snapshot: "s1", append: ["m1"] });
    await writer.close();
    // chattr +i: read-only even for root (CI runs as root, where chmod does not stop writes).
    if (spawnSync("chattr", ["+i", path]).status !== 0)
      return context.skip("chattr +i is not available here (it needs ext4-like file attributes and CAP_LINUX_IMMUTABLE)");
    try {
      const store = await openSessionStore(`sqlite:${path}`);
      try {
        expect((await store.list()).map((s) => [s.id, s.messageCount])).toEqual([["alice", 1]]);
        expect((await store.load("alice"))?.messages.map((m) => m.json)).toEqual(["m1"]);
        const error = await store.save("alice", { expectedVersion: 1, snapshot: "s2", append: ["m2"] }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SessionStoreError);
        expect((error as Error).message).toMatch(
          new RegExp(`^The session store SQLite ${path} failed: .*readonly.*\\. Check that the file and its folder are writable and the disk is not full\\.$`),
        );
      } finally {
        await store.close();
      }
    } finally {
      spawnSync("chattr", ["-i", path]);
    }
  });
});

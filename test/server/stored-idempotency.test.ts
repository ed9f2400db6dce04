/**
 * Idempotency-Keys kept in a store two servers share (one SQLite file): the claim, the answer,
 * a claim whose server died, a refused request and the time limit, on a clock of the test's.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it as base } from "vitest";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import type { SessionStore } from "../../src/sessions/types.ts";
import { LEASE_MS } from "../../src/server/handler-lease.ts";
import { keyedRequest } from "../../src/server/idempotency.ts";
import { KeyInUseError, StoredIdempotencyKeys } from "../../src/server/stored-idempotency.ts";
import type { KeyClaim } from "../../src/server/stored-idempotency.ts";

const dir = mkdtempSync(join(tmpdir(), "stepflow-stored-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stores: SessionStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

const TTL = 24 * 60 * 60 * 1000;
const ROUTE = "POST /api/workflows/agent/run";

/** The stores two servers share: a SQLite file, and PostgreSQL when DATABASE_URL names one. */
const kinds: [string, ((name: string) => string) | undefined][] = [
  ["SQLite", (name) => `sqlite:${join(dir, `${name}.db`)}`],
  ["PostgreSQL", process.env.DATABASE_URL === undefined ? undefined : () => process.env.DATABASE_URL as string],
];

/**
 * Two servers' keys on one store (each with its own connection), on the test's clock, in a
 * namespace of this test's (a PostgreSQL database outlives the run); their holders are on other
 * hosts, judged by time alone.
 */
async function twoServers(url: string, name: string, clock: { now: number }, wrap: (store: SessionStore) => SessionStore = (store) => store) {
  const [a, b] = [await openSessionStore(url), await openSessionStore(url)];
  stores.push(a, b);
  const now = () => clock.now;
  const namespace = `${name}-${process.pid}-${Date.now()}`;
  return {
    a: new StoredIdempotencyKeys(a, "host-a/1/aaaa", { now, namespace }),
    b: new StoredIdempotencyKeys(wrap(b), "host-b/2/bbbb", { now, namespace }),
    sessions: a,
    prefix: `idempotency:${namespace}:`,
  };
}

/** A request's work: counts its runs, answers `status` with `body`. */
function work(status = 200, body = '{"ok":true}') {
  const runs: KeyClaim[] = [];
  return { runs, run: async (claim: KeyClaim) => (runs.push(claim), { status, body }) };
}

/** A request that answers only when `finish` is called. */
function pending() {
  let finish: (answer: { status: number; body: string }) => void = () => {};
  let entered: () => void = () => {};
  const claims: KeyClaim[] = [];
  const started = new Promise<void>((resolve) => (entered = resolve));
  const run = (claim: KeyClaim) => {
    claims.push(claim);
    entered();
    return new Promise<{ status: number; body: string }>((resolve) => (finish = resolve));
  };
  return { run, started, claims, finish: (answer: { status: number; body: string }) => finish(answer) };
}

describe.each(kinds)("a key kept in a shared store (%s)", (_kind, storeUrl) => {
  const store = (name: string) => (storeUrl as (name: string) => string)(name);
  const it = base.skipIf(storeUrl === undefined);

  it("is answered once: the other server replays the answer, and refuses the key with another body (422)", async () => {
    const clock = { now: 1_000 };
    const { a, b } = await twoServers(store("replay"), "replay", clock);
    const first = work(200, '{"id":"h1"}');
    expect(await a.answer(keyedRequest("alice", ROUTE, "k1", '{"input":1}'), first.run)).toEqual({ status: 200, body: '{"id":"h1"}', replayed: false });
    const second = work();
    expect(await b.answer(keyedRequest("alice", ROUTE, "k1", '{"input":1}'), second.run)).toEqual({ status: 200, body: '{"id":"h1"}', replayed: true });
    await expect(b.answer(keyedRequest("alice", ROUTE, "k1", '{"input":2}'), second.run)).rejects.toMatchObject({
      status: 422,
      code: "idempotency_key_reused",
      message: expect.stringContaining("Use a new key for each new request"),
    });
    // A key is its sender's: bob's "k1" is another request.
    expect((await b.answer(keyedRequest("bob", ROUTE, "k1", '{"input":1}'), second.run)).replayed).toBe(false);
    expect([first.runs.length, second.runs.length]).toEqual([1, 1]);
  });

  it("while the first server answers, gets 409 idempotency_key_in_use on the other, then the answer", async () => {
    const clock = { now: 1_000 };
    const { a, b } = await twoServers(store("in-use"), "in-use", clock);
    const slow = pending();
    const answering = a.answer(keyedRequest("alice", ROUTE, "k1", "{}"), slow.run);
    await slow.started;
    const other = work();
    const refused = await b.answer(keyedRequest("alice", ROUTE, "k1", "{}"), other.run).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KeyInUseError);
    expect(refused).toMatchObject({ status: 409, code: "idempotency_key_in_use", retryAfter: 1 });
    expect((refused as Error).message).toBe(
      'The Idempotency-Key "k1" is in use: another server sharing this store (host-a/1/aaaa) is still answering the first request sent with it. Send the request again with the same key in 1 s to get that answer; a new key would do it twice.',
    );
    // Renewed by its server, the claim outlives a lease.
    clock.now += (LEASE_MS * 2) / 3;
    await a.renew();
    clock.now += (LEASE_MS * 2) / 3;
    await expect(b.answer(keyedRequest("alice", ROUTE, "k1", "{}"), other.run)).rejects.toBeInstanceOf(KeyInUseError);
    slow.finish({ status: 200, body: '{"done":true}' });
    expect(await answering).toMatchObject({ replayed: false });
    expect(await b.answer(keyedRequest("alice", ROUTE, "k1", "{}"), other.run)).toEqual({ status: 200, body: '{"done":true}', replayed: true });
    expect(other.runs).toHaveLength(0);
  });

  it("whose server died before answering is taken over a lease later, with the run it had started, and answered once", async () => {
    const clock = { now: 1_000 };
    const { a, b } = await twoServers(store("abandoned"), "abandoned", clock);
    const dead = pending();
    const late = a.answer(keyedRequest("alice", ROUTE, "k1", "{}"), dead.run);
    await dead.started;
    await dead.claims[0]?.noteHandler("run-1");
    // No renewal comes: past the lease, the claim is free for another server.
    clock.now += LEASE_MS - 1;
    await expect(b.answer(keyedRequest("alice", ROUTE, "k1", "{}"), work().run)).rejects.toBeInstanceOf(KeyInUseError);
    clock.now += 1;
    const retry = work(200, '{"id":"run-1"}');
    expect(await b.answer(keyedRequest("alice", ROUTE, "k1", "{}"), retry.run)).toEqual({ status: 200, body: '{"id":"run-1"}', replayed: false });
    expect(retry.runs.map((c) => c.handlerId)).toEqual(["run-1"]);
    // The dead server's late answer does not replace the one given: its claim was taken over.
    dead.finish({ status: 200, body: '{"late":true}' });
    await late;
    const third = work();
    expect(await a.answer(keyedRequest("alice", ROUTE, "k1", "{}"), third.run)).toEqual({ status: 200, body: '{"id":"run-1"}', replayed: true });
    expect(third.runs).toHaveLength(0);
  });

  it("after a refused request (not 2xx) is free again, for any body", async () => {
    const clock = { now: 1_000 };
    const { a, b } = await twoServers(store("refused"), "refused", clock);
    expect(await a.answer(keyedRequest("alice", ROUTE, "k1", '{"input":1}'), work(404, '{"error":{}}').run)).toMatchObject({ status: 404, replayed: false });
    const retry = work(200);
    expect(await b.answer(keyedRequest("alice", ROUTE, "k1", '{"input":2}'), retry.run)).toMatchObject({ status: 200, replayed: false });
    expect(retry.runs).toHaveLength(1);
  });

  it("is forgotten after its time: read as absent, and swept from the store", async () => {
    const clock = { now: Date.now() };
    const { a, b, sessions, prefix } = await twoServers(store("expiry"), "expiry", clock);
    await a.answer(keyedRequest("alice", ROUTE, "old", "{}"), work().run);
    const keys = async () => (await sessions.list({ limit: 1_000_000 })).filter((s) => s.id.startsWith(prefix)).length;
    expect(await keys()).toBe(1);
    clock.now += TTL;
    // Read: the old answer is not given; the request runs as new.
    const again = work();
    expect(await b.answer(keyedRequest("alice", ROUTE, "old", '{"other":true}'), again.run)).toMatchObject({ replayed: false });
    expect(again.runs).toHaveLength(1);
    await a.answer(keyedRequest("alice", ROUTE, "young", "{}"), work().run);
    expect(await keys()).toBe(2);
    // Swept: a day later both are old; one young key written since stays.
    clock.now += TTL;
    await a.answer(keyedRequest("alice", ROUTE, "new", "{}"), work().run);
    expect(await b.sweep()).toBe(2);
    expect(await keys()).toBe(1);
    expect((await a.answer(keyedRequest("alice", ROUTE, "new", "{}"), work().run)).replayed).toBe(true);
  });

  it("is not swept when another server claims it again between the sweep's read and its delete", async () => {
    const clock = { now: Date.now() };
    // Server b's store runs `between` just before each delete it is asked for: the moment a sweep
    // has read a key as old and not yet deleted it.
    let between = async () => {};
    const beforeDelete = (sessions: SessionStore): SessionStore =>
      new Proxy(sessions, {
        get(of, property) {
          const value = Reflect.get(of, property, of) as unknown;
          if (property === "delete") return async (...args: Parameters<SessionStore["delete"]>) => (await between(), of.delete(...args));
          return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(of) : value;
        },
      });
    const { a, b } = await twoServers(store("sweep-race"), "sweep-race", clock, beforeDelete);
    await a.answer(keyedRequest("alice", ROUTE, "k1", "{}"), work(200, '{"id":"h1"}').run);
    clock.now += TTL + 60_000;
    const fresh = work(200, '{"id":"h2"}');
    between = async () => {
      between = async () => {};
      // The old key is free: server a claims it for a new request and keeps its answer.
      expect(await a.answer(keyedRequest("alice", ROUTE, "k1", '{"input":2}'), fresh.run)).toMatchObject({ replayed: false });
    };
    expect(await b.sweep()).toBe(0);
    expect(fresh.runs).toHaveLength(1);
    // The answer given since is kept: the request sent again gets it, on either server.
    const retry = work();
    expect(await b.answer(keyedRequest("alice", ROUTE, "k1", '{"input":2}'), retry.run)).toEqual({ status: 200, body: '{"id":"h2"}', replayed: true });
    expect(retry.runs).toHaveLength(0);
  });
});

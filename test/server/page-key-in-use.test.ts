/**
 * The web page's POSTs (src/web/page/api.ts) behind a load balancer of two servers sharing one
 * store: a start whose answer is lost while its server still answers it reaches the other
 * server, which says the key is in use (409); the page sends it again with the same key until
 * the first server's answer is in the store, and shows that run. Run in Node: the page's
 * relative URLs go where the test's balancer sends them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import type { SessionStore } from "../../src/sessions/types.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { api } from "../../src/web/page/api.ts";
import { ThreeQuestions } from "./server-fixtures.ts";

declare global {
  // The page's own (a browser's); this test gives Node one for it, which type-checks with Node's types.
  var sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
}

const dir = mkdtempSync(join(tmpdir(), "stepflow-page-key-"));
const realFetch = globalThis.fetch;
const open: { close(): Promise<void> }[] = [];
afterAll(async () => {
  globalThis.fetch = realFetch;
  Reflect.deleteProperty(globalThis, "sessionStorage");
  for (const s of open.reverse()) await s.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeAll(() => {
  globalThis.sessionStorage = { getItem: () => null, setItem: () => {} };
});

/** `store`, which calls `claimed` once a key is claimed, and whose write of a kept answer waits for `until`. */
function slowAnswers(store: SessionStore, claimed: () => void, until: Promise<void>): SessionStore {
  return new Proxy(store, {
    get(of, property) {
      if (property === "save")
        return async (id: string, save: Parameters<SessionStore["save"]>[1]) => {
          if (!id.startsWith("idempotency:")) return of.save(id, save);
          if (save.expectedVersion > 0 && save.snapshot.includes('"answer"')) await until;
          const version = await of.save(id, save);
          if (save.expectedVersion === 0) claimed();
          return version;
        };
      const value = Reflect.get(of, property, of) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(of) : value;
    },
  });
}

it("sends a start again while another server answers its key, and gets that server's run", async () => {
  const sqlite = await openSessionStore(`sqlite:${join(dir, "shared.db")}`);
  open.push(sqlite);
  let answerKept = () => {};
  let claimed = () => {};
  const keyClaimed = new Promise<void>((resolve) => (claimed = resolve));
  const first = new WorkflowServer({
    workflows: { questions: new ThreeQuestions({ timeout: null }) },
    store: slowAnswers(sqlite, claimed, new Promise<void>((resolve) => (answerKept = resolve))),
    onError: () => {},
  });
  const second = new WorkflowServer({ workflows: { questions: new ThreeQuestions({ timeout: null }) }, store: sqlite, onError: () => {} });
  open.push(second, first);
  const urls = [(await first.listen({ port: 0 })).url, (await second.listen({ port: 0 })).url];

  // The balancer: the first try goes to the first server, whose answer is lost on the way back
  // once it has claimed the key (it goes on answering); every later try goes to the second.
  const tries: { server: number; key: string | null; status?: number }[] = [];
  globalThis.fetch = async (input, init) => {
    const server = tries.length === 0 ? 0 : 1;
    const at = tries.push({ server, key: new Headers(init?.headers).get("idempotency-key") }) - 1;
    const sent = realFetch(new URL(String(input), `${urls[server]}/`), init);
    if (server === 0) {
      void sent.catch(() => {});
      await keyClaimed;
      throw new TypeError("fetch failed: the connection was reset");
    }
    const response = await sent;
    (tries[at] as { status?: number }).status = response.status;
    // Told the key is in use: the first server may now keep its answer, for the page's next try.
    if (response.status === 409) answerKept();
    return response;
  };

  const started = await api.start("questions", {});

  expect(tries.length).toBeGreaterThanOrEqual(3);
  expect(new Set(tries.map((t) => t.key)).size).toBe(1);
  expect(tries[0]?.key).toMatch(/^[0-9a-f-]{32,36}$/);
  expect(tries.map((t) => t.status).slice(1, -1)).toEqual(tries.slice(1, -1).map(() => 409));
  expect(tries.at(-1)?.status).toBe(202);
  // One run, the first server's: the page shows it.
  const listed = (await (await realFetch(`${urls[1]}/api/handlers`)).json()) as { handlers: { id: string }[] };
  expect(listed.handlers.map((r) => r.id)).toEqual([started.id]);
});

/**
 * The web page's event stream (`followEvents` of src/web/page/api.ts) when the server it reads
 * dies before saving the events it streamed, and another takes the run over from its last save:
 * the page says its events changed, rather than skipping what the run did since. Run in Node
 * against real servers: the page's relative URLs go to whichever server is up.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { StreamedEvent } from "../../src/client/types.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { ApiError, followEvents } from "../../src/web/page/api.ts";
import { dyingStore } from "./dying-store.ts";
import { gated } from "./server-fixtures.ts";

declare global {
  // The page's own (a browser's); this test gives Node one for it, which type-checks with Node's types.
  var sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
}

const dir = mkdtempSync(join(tmpdir(), "stepflow-page-follow-"));
const realFetch = globalThis.fetch;
/** Where the page's relative URLs go; a request made while no server is up waits for the next. */
let server: Promise<string> = new Promise(() => {});
beforeAll(() => {
  globalThis.fetch = async (input, init) => realFetch(new URL(String(input), `${await server}/`), init);
  globalThis.sessionStorage = { getItem: () => null, setItem: () => {} };
});
afterAll(() => {
  globalThis.fetch = realFetch;
  Reflect.deleteProperty(globalThis, "sessionStorage");
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The page follows a run on a server that dies once it has streamed ten ticks it never saved;
 * a server restarted on the same file, whose run's gate is `gate`, takes it over, and the page's
 * next request reaches it once `ready` (given the new server's URL and run id) resolves.
 */
async function followAcrossRestart(
  name: string,
  gate: Promise<void>,
  ready: (url: string, id: string) => Promise<void>,
): Promise<{ seen: StreamedEvent[]; outcome: unknown }> {
  const file = join(dir, `${name}.db`);
  const sqlite = await openSessionStore(`sqlite:${file}`);
  const dying = dyingStore(sqlite);
  let open = () => {};
  const firstGate = new Promise<void>((resolve) => (open = resolve));
  const first = new WorkflowServer({ workflows: { plan: gated(firstGate) }, store: dying.store, onError: () => {} });
  const firstUrl = (await first.listen({ port: 0 })).url;
  server = Promise.resolve(firstUrl);
  const client = new WorkflowClient({ baseUrl: firstUrl, fetch: realFetch });
  let second: WorkflowServer | undefined;
  try {
    const { id } = await client.start("plan", {});
    const seen: StreamedEvent[] = [];
    let asked = () => {};
    const question = new Promise<void>((resolve) => (asked = resolve));
    let ticked = () => {};
    const tenTicks = new Promise<void>((resolve) => (ticked = resolve));
    const following = followEvents(id, (event) => {
      seen.push(event);
      if (event.type === "InputRequiredEvent") asked();
      if (event.type.endsWith("Tick") && (event.data as { i: number }).i === 9) ticked();
    }).then(
      (status) => ({ status }),
      (error: unknown) => error,
    );
    await question;
    // Answered (and saved), the server dies: the ticks it streams next are never saved.
    await client.sendEvent(id, "HumanResponseEvent", { response: "pro" });
    dying.die();
    open();
    await tenTicks;
    let up = (_url: string) => {};
    server = new Promise((resolve) => (up = resolve));
    await first.close();
    second = new WorkflowServer({ workflows: { plan: gated(gate) }, store: `sqlite:${file}` });
    const url = (await second.listen({ port: 0 })).url;
    await ready(url, id);
    up(url);
    return { seen, outcome: await following };
  } finally {
    await first.close();
    await second?.close();
    await sqlite.close();
  }
}

describe("the web page following a run whose server died before saving its last events", () => {
  it("says the run's events changed when the run took over is behind what the page showed", { timeout: 60_000 }, async () => {
    const { seen, outcome } = await followAcrossRestart("behind", new Promise<void>(() => {}), async () => {});
    expect(seen.filter((event) => event.type.endsWith("Tick"))).toHaveLength(10);
    expect(outcome).toBeInstanceOf(ApiError);
    expect((outcome as ApiError).message).toMatch(
      /^The events of run \S+ changed while the page was away: the server running it stopped before it saved its last events/,
    );
  });

  it("says so too when the run took over has gone past them with other events, instead of skipping those", { timeout: 60_000 }, async () => {
    let last = 0;
    const { seen, outcome } = await followAcrossRestart("past", Promise.resolve(), async (url, id) => {
      // The new server's run writes its ticks again (new ones, at new times) and asks again: its log is past the page's.
      for await (const event of new WorkflowClient({ baseUrl: url, fetch: realFetch }).streamEvents(id)) {
        last = event.seq;
        if (event.type === "InputRequiredEvent" && event.data.prefix === "Sure?") break;
      }
    });
    expect(last).toBeGreaterThan(seen.at(-1)?.seq ?? Infinity);
    expect(outcome).toBeInstanceOf(ApiError);
    expect((outcome as ApiError).message).toContain("changed while the page was away");
  });
});

/**
 * Gates that test processes pass on their way (`GET /gate/NAME?worker=ID`) on 127.0.0.1: the
 * test counts who passed where, and holds a gate shut to stop a process at a known point (to
 * kill it there) without sleeping.
 */
import { createServer } from "node:http";
import type { ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface GateServer {
  readonly baseURL: string;
  /** The workers that reached gate `name`, in order (held or not). */
  hits(name: string): string[];
  /** Every gate reached, in order: `"NAME WORKER"`. */
  log(): string[];
  /** Resolves with the worker that reaches gate `name` for the `n`th time (1 = the first), now or later. */
  reached(name: string, n?: number): Promise<string>;
  /** Keeps gate `name` shut: who reaches it waits until {@link open}. */
  hold(name: string): void;
  /** Opens gate `name`: who waits there goes on, and so does whoever comes later. */
  open(name: string): void;
  close(): Promise<void>;
}

/** @example const gates = await startGateServer(); gates.hold("tool"); await gates.reached("tool"); */
export async function startGateServer(): Promise<GateServer> {
  const hits = new Map<string, string[]>();
  const log: string[] = [];
  const held = new Map<string, ServerResponse[]>();
  const watchers: { name: string; n: number; resolve: (worker: string) => void }[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://gate");
    const name = url.pathname.replace(/^\/gate\//, "");
    const worker = url.searchParams.get("worker") ?? "";
    const list = hits.get(name) ?? [];
    list.push(worker);
    hits.set(name, list);
    log.push(`${name} ${worker}`);
    for (const w of watchers.filter((w) => w.name === name && w.n === list.length)) w.resolve(worker);
    const waiting = held.get(name);
    if (waiting) waiting.push(res);
    else res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    hits: (name) => [...(hits.get(name) ?? [])],
    log: () => [...log],
    reached: (name, n = 1) =>
      new Promise((resolve) => {
        const list = hits.get(name) ?? [];
        if (list.length >= n) resolve(list[n - 1] as string);
        else watchers.push({ name, n, resolve });
      }),
    hold: (name) => void (held.has(name) || held.set(name, [])),
    open: (name) => {
      for (const res of held.get(name) ?? []) if (!res.destroyed) res.end("ok");
      held.delete(name);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

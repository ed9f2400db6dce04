/**
 * What the local servers of the providers' wire formats share: an HTTP server on 127.0.0.1 that
 * reads each request's JSON body, keeps every request, and hands it to the provider's handler;
 * and the provider-neutral turns a test scripts (text, tool calls, usage), which each server
 * sends in its own provider's format.
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One reply of the model: text, tool calls, or both, and the tokens the server reports for it. */
export interface WireTurn {
  readonly text?: string;
  readonly calls?: readonly { readonly name: string; readonly input: Record<string, unknown> }[];
  /** Default: 100 prompt tokens and 10 completion tokens per turn, plus 1 per turn before. */
  readonly usage?: { readonly input: number; readonly output: number };
}

/** A request as the server received it. */
export interface WireRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

/** A running server: its root URL, the requests it got, and those it refused (with why). */
export interface WireServer {
  /** e.g. `http://127.0.0.1:41234` */
  readonly url: string;
  readonly requests: WireRequest[];
  readonly refused: string[];
  close(): Promise<void>;
}

/** Answers a request; returns the reason when it refuses one, as the real API would (400 and its error body, sent by the handler). */
export type WireHandler = (request: WireRequest, res: ServerResponse, index: number) => string | undefined;

/**
 * @example
 * const server = await startWireServer((request, res) => (res.end("{}"), undefined));
 */
export async function startWireServer(handler: WireHandler): Promise<WireServer> {
  const requests: WireRequest[] = [];
  const refused: string[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (raw += chunk));
    req.on("end", () => {
      let body: unknown;
      try {
        body = raw === "" ? undefined : JSON.parse(raw);
      } catch {
        body = raw;
      }
      const request: WireRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body };
      requests.push(request);
      const why = handler(request, res, requests.length - 1);
      if (why !== undefined) refused.push(why);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    refused,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** The usage a turn reports: its own, or one that grows with each turn so that sums can be checked. */
export function turnUsage(turn: WireTurn, index: number): { input: number; output: number } {
  return turn.usage ?? { input: 100 + index, output: 10 };
}

/** Writes `body` as JSON with `status`. */
export function sendJSON(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

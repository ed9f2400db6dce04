/**
 * Reading a request's JSON body within the server's limits: its size (checked against
 * `Content-Length` before reading, and counted while a body without one streams in) and its
 * nesting depth (checked before parsing, so a deeply nested body gets a 400 rather than a
 * stack overflow in `JSON.parse` or in whatever walks the value next).
 *
 * Hand-rolled rather than Hono's `bodyLimit` middleware: that reads `c.req.raw.body`, which
 * makes `@hono/node-server` build a full `Request` for every request (a third of the server's
 * throughput); `c.req.text()` with a known length reads Node's request directly.
 */
import type { Context } from "hono";
import { ServerRequestError } from "./refusals.ts";

/** The deepest nesting of arrays and objects a request body may have. @example `{"a":{"b":[1]}}` is 3 deep */
export const MAX_JSON_DEPTH = 256;

/** Bodies read, by request: the idempotency check reads a body before its route does. */
const read = new WeakMap<Request, Promise<string>>();

/**
 * The body as text, or 413 when it is larger than `limit` bytes; read once per request.
 * @example const text = await readBodyText(c, 1024 * 1024);
 */
export function readBodyText(c: Context, limit: number): Promise<string> {
  let text = read.get(c.req.raw);
  if (!text) read.set(c.req.raw, (text = readOnce(c, limit)));
  return text;
}

async function readOnce(c: Context, limit: number): Promise<string> {
  const tooLarge = () => new ServerRequestError(413, "body_too_large", `The request body is larger than the server's limit of ${limit} bytes.`);
  const length = c.req.header("Content-Length");
  if (length !== undefined && c.req.header("Transfer-Encoding") === undefined) {
    // Node's HTTP parser reads no more than Content-Length says, so the header is the size.
    if (Number(length) > limit) throw tooLarge();
    return c.req.text();
  }
  const body = c.req.raw.body;
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      void reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}

/**
 * Parses `text` as JSON, refusing (400) a value nested deeper than `maxDepth` arrays and objects.
 * @example parseJsonText('{"input":{"x":1}}', MAX_JSON_DEPTH); // { input: { x: 1 } }
 */
export function parseJsonText(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  const depth = jsonDepth(text, maxDepth);
  if (depth > maxDepth)
    throw new ServerRequestError(
      400,
      "json_too_deep",
      `The body nests arrays and objects more than ${maxDepth} levels deep, the server's limit. Send flatter JSON.`,
    );
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ServerRequestError(400, "invalid_json", `The body is not valid JSON: ${error instanceof Error ? error.message : String(error)}.`);
  }
}

/**
 * How deep `text` nests brackets outside strings, counting no further than `stop + 1`: one pass
 * over the characters, no recursion. Malformed JSON is left to `JSON.parse` to describe.
 */
function jsonDepth(text: string, stop: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \ */) i++;
      else if (ch === 0x22 /* " */) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      if (++depth > deepest && (deepest = depth) > stop) return deepest;
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) depth--;
  }
  return deepest;
}

/**
 * The MCP SDK reads every message whole: over stdio it drops the connection past its read
 * buffer (10 MiB), over streamable HTTP it has no limit at all (a 50 MB answer was read,
 * parsed and held before `maxOutputChars` could cut it). This caps one message on both
 * transports at the same size, so that an answer too large fails its call with a message the
 * model can act on instead of killing the connection or the heap.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { StepflowError } from "../core/internal.ts";

/** The default of `maxMessageBytes`: the MCP SDK's own read buffer for stdio, 10 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** An MCP server sent one message larger than `maxMessageBytes`; it was not read. @example `if (err instanceof McpMessageTooLargeError) console.error(err.message)` */
export class McpMessageTooLargeError extends StepflowError {
  override name = "McpMessageTooLargeError";
}

const LF = 10;

/**
 * A `fetch` whose response bodies fail once one message is over `maxBytes`: a JSON body as a
 * whole, an event stream line by line (the SDK writes each message as one `data:` line), so a
 * long-lived stream of small messages is never cut.
 */
export function messageCappedFetch(maxBytes: number, tooLarge: () => void): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.body) return response;
    const perLine = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    let since = 0; // bytes of the message (JSON) or line (event stream) being read
    const fail = (controller: TransformStreamDefaultController<Uint8Array>) => {
      tooLarge();
      controller.error(new McpMessageTooLargeError(`The MCP server sent a message over ${bytesText(maxBytes)} (maxMessageBytes); it was not read.`));
    };
    const capped = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          let start = 0;
          if (perLine)
            for (let lf = chunk.indexOf(LF); lf !== -1; lf = chunk.indexOf(LF, start)) {
              if (since + lf - start > maxBytes) return fail(controller);
              since = 0;
              start = lf + 1;
            }
          since += chunk.length - start;
          if (since > maxBytes) return fail(controller);
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(capped, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** `10 MiB`, `512 KiB`, `300 bytes`. */
export function bytesText(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes.toLocaleString("en-US")} bytes`;
}

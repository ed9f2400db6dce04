/** A model server for tests that answers every request with raw bytes: the wire as a provider sends it, cut or broken as a test needs. */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A server on 127.0.0.1 answering every request, once its body is read, with `respond` (which
 * gets the body as text, for a test to check what the client sent).
 * @example const server = await rawServer((res) => res.end("data: [DONE]\n\n")); … await server.close();
 */
export async function rawServer(
  respond: (res: ServerResponse, req: IncomingMessage, body: string) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => respond(res, req, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

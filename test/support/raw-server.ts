/** A model server for tests that answers every request with raw bytes: the wire as a provider sends it, cut or broken as a test needs. */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A server on 127.0.0.1 answering every request, once its body is read, with `respond`.
 * @example const server = await rawServer((res) => res.end("data: [DONE]\n\n")); … await server.close();
 */
export async function rawServer(respond: (res: ServerResponse, req: IncomingMessage) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const http = createServer((req, res) => {
    req.resume();
    req.on("end", () => respond(res, req));
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

/**
 * Who can reach a WorkflowServer: a web page using DNS rebinding (its own name resolving to
 * 127.0.0.1) sends that name in `Host`, and a default server answers it nothing; a server
 * other machines reach needs a token or the operator's explicit word.
 */
import { request } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import { ConfigurationError } from "../../src/core/errors.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import { webPageDirectory } from "../../src/web/web-page.ts";
import { firingAgent, startServer } from "./server-fixtures.ts";

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** An HTTP request to 127.0.0.1:`port` naming `host` in its Host header, as a rebinding page's browser sends it. */
function send(port: number, host: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        headers: { Host: host, ...(text === undefined ? {} : { "Content-Type": "application/json" }), ...headers },
      },
      (res) => {
        let data = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (data += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

const ATTACKER = "rebind.attacker.example";

/**
 * Sends `head` (a request line and headers, as written) over a socket to 127.0.0.1:`port`, so
 * that a Host header can be empty, missing or repeated, as no HTTP client library sends it.
 */
function sendRaw(port: number, head: string, body = ""): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(`${head}\r\nConnection: close\r\n\r\n${body}`));
    let data = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (data += chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      const split = data.indexOf("\r\n\r\n");
      const [status = "", ...headers] = data.slice(0, split).split("\r\n");
      let body = data.slice(split + 4);
      if (headers.some((h) => /^transfer-encoding:\s*chunked$/i.test(h))) {
        let plain = "";
        for (let at = 0, size = 1; size > 0;) {
          const end = body.indexOf("\r\n", at);
          size = Number.parseInt(body.slice(at, end), 16);
          plain += body.slice(end + 2, end + 2 + size);
          at = end + 4 + size;
        }
        body = plain;
      }
      resolve({ status: Number(status.split(" ")[1]), body });
    });
  });
}

describe("a server without a token", () => {
  let server: WorkflowServer;
  let port: number;
  let url: string;
  const fired: number[] = [];

  beforeAll(async () => {
    const started = await startServer({ workflows: { hr: { workflow: firingAgent(fired) } }, webRoot: await webPageDirectory() });
    server = started.server;
    url = started.url;
    port = Number(new URL(url).port);
  }, 120_000);
  afterAll(() => server.close());

  it("starts, reads and approves nothing for a request naming another host", async () => {
    // A run waiting for approval, started the legitimate way.
    const client = new WorkflowClient({ baseUrl: url });
    const { id } = await client.start("hr", { input: "Fire Lawson" });
    let approvalId: string | undefined;
    for await (const ev of client.streamEvents(id)) {
      if (ev.type !== "agent.ToolApprovalRequestEvent") continue;
      approvalId = String(ev.data.approvalId);
      break;
    }
    expect(approvalId).toBeDefined();

    const host = `${ATTACKER}:${port}`;
    const attempts = [
      await send(port, host, "POST", "/api/workflows/hr/start", { input: { input: "Fire Lawson" } }),
      await send(port, host, "GET", "/api/handlers"),
      await send(port, host, "GET", `/api/handlers/${id}/context`),
      await send(port, host, "GET", `/api/handlers/${id}/events?format=json`),
      await send(port, host, "POST", `/api/handlers/${id}/approvals`, { approvalId, approved: true }),
      await send(port, ATTACKER, "GET", "/"),
    ];
    for (const answer of attempts) {
      expect(answer.status).toBe(421);
      expect(JSON.parse(answer.body)).toMatchObject({
        error: { code: "host_not_allowed", message: expect.stringContaining(`--allowed-host ${ATTACKER}`) },
      });
    }
    const list = JSON.parse((await send(port, "localhost", "GET", "/api/handlers")).body) as { handlers: { status: string }[] };
    expect(list.handlers.map((h) => h.status)).toEqual(["waiting"]);
    expect(fired).toEqual([]);
    await client.cancel(id);
  });

  it("refuses a request whose Host is empty, missing (HTTP/1.0) or repeated, or whose URL and Host disagree, with the same 421", async () => {
    for (const [head, what, body] of [
      ["GET /api/handlers HTTP/1.1\r\nHost:", "an empty Host header"],
      ["GET /api/handlers HTTP/1.1\r\nHost:   ", "an empty Host header"],
      ["GET /api/handlers HTTP/1.0", "no Host header"],
      [`GET /api/handlers HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nhost: ${ATTACKER}`, "2 Host headers"],
      ["POST /api/workflows/hr/start HTTP/1.1\r\nHost:\r\nContent-Type: application/json\r\nContent-Length: 2", "an empty Host header", "{}"],
    ]) {
      const answer = await sendRaw(port, head as string, body);
      expect({ head, status: answer.status }).toEqual({ head, status: 421 });
      expect(JSON.parse(answer.body)).toEqual({
        error: {
          code: "host_not_allowed",
          message: `This server does not answer requests for ${what}: without a token it answers only localhost, IP addresses and the names it is told. Send one Host header naming the server, as browsers and HTTP/1.1 clients do. Open it at http://127.0.0.1 or http://localhost, or start it with a token (--token, or token in WorkflowServer's options), or, behind a proxy that checks Host itself, allow any (--allowed-host "*", or allowedHosts: ["*"]).`,
        },
      });
    }
    // The URL of a request line with a whole URL is built from it, not from Host: Host is checked too.
    const absolute = await sendRaw(port, `GET http://localhost:${port}/api/handlers HTTP/1.1\r\nHost: ${ATTACKER}`);
    expect(absolute.status).toBe(421);
    expect(JSON.parse(absolute.body)).toMatchObject({ error: { code: "host_not_allowed", message: expect.stringContaining(`--allowed-host ${ATTACKER}`) } });
    // The same requests with one Host naming the server are answered.
    expect((await sendRaw(port, `GET /api/handlers HTTP/1.0\r\nHost: 127.0.0.1:${port}`)).status).toBe(200);
    expect((await sendRaw(port, `GET http://localhost:${port}/api/handlers HTTP/1.1\r\nHost: localhost:${port}`)).status).toBe(200);
  });

  it("answers localhost, 127.0.0.1 and [::1], with or without the port", async () => {
    for (const host of ["localhost", `localhost:${port}`, "127.0.0.1", `127.0.0.1:${port}`, "[::1]", `[::1]:${port}`, "LOCALHOST."]) {
      const answer = await send(port, host, "GET", "/api/health");
      expect({ host, status: answer.status }).toEqual({ host, status: 200 });
    }
  });

  it("answers an IPv4 address however it is written, and refuses names that only begin like one or like localhost", async () => {
    // The URL parser reads these as 127.0.0.1.
    for (const host of ["0x7f.0.0.1", `2130706433:${port}`, "127.1"]) {
      const answer = await send(port, host, "GET", "/api/health");
      expect({ host, status: answer.status }).toEqual({ host, status: 200 });
    }
    for (const host of ["127.0.0.1.attacker.example", `localhost.attacker.example:${port}`, "localhost-attacker.example"]) {
      const answer = await send(port, host, "GET", "/api/health");
      expect({ host, status: answer.status }).toEqual({ host, status: 421 });
    }
  });

  it("serves the web page at http://127.0.0.1:PORT and http://localhost:PORT", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const page = await send(port, host, "GET", "/");
      expect(page.status).toBe(200);
      expect(page.body).toContain("<title>");
    }
  });
});

describe("names the operator allows", () => {
  it("answers a proxy's name given in allowedHosts, and its subdomains for a leading dot", async () => {
    const { server, url } = await startServer({ allowedHosts: ["stepflow.example.com", ".internal.example"] });
    try {
      const port = Number(new URL(url).port);
      expect((await send(port, "stepflow.example.com", "GET", "/api/workflows")).status).toBe(200);
      expect((await send(port, "ops.internal.example:443", "GET", "/api/workflows")).status).toBe(200);
      expect((await send(port, "stepflow.example.com.evil.example", "GET", "/api/workflows")).status).toBe(421);
    } finally {
      await server.close();
    }
  });

  it("refuses allowedHosts that are not host names", () => {
    expect(() => new WorkflowServer({ workflows: { hr: firingAgent([]) }, store: "memory:", allowedHosts: ["http://x.example/"] })).toThrow(
      /allowedHosts takes host names/,
    );
  });

  it('with "*", answers a request with an empty or no Host (a proxy in front checks it)', async () => {
    const { server, url } = await startServer({ allowedHosts: ["*"] });
    try {
      const port = Number(new URL(url).port);
      expect((await sendRaw(port, "GET /api/workflows HTTP/1.1\r\nHost:")).status).toBe(200);
      expect((await sendRaw(port, "GET /api/workflows HTTP/1.0")).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("with a token, answers any name, and the token is what is checked", async () => {
    const { server, url } = await startServer({ token: "s3cret-token" });
    try {
      const port = Number(new URL(url).port);
      expect((await send(port, ATTACKER, "GET", "/api/handlers")).status).toBe(401);
      expect((await send(port, ATTACKER, "GET", "/api/handlers", undefined, { Authorization: "Bearer s3cret-token" })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe("listening where other machines reach it", () => {
  it("refuses 0.0.0.0 without a token, saying what to do", async () => {
    const server = new WorkflowServer({ workflows: { hr: firingAgent([]) }, store: "memory:" });
    try {
      const refused = await server.listen({ port: 0, host: "0.0.0.0" }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConfigurationError);
      expect((refused as Error).message).toMatch(/^Listening on 0\.0\.0\.0 without a token would let anyone who reaches it start runs/);
      expect((refused as Error).message).toContain("allowUnauthenticated: true");
    } finally {
      await server.close();
    }
  });

  it("listens on 0.0.0.0 with a token, or when the operator allows it unauthenticated", async () => {
    for (const options of [{ token: "s3cret-token" }, { allowUnauthenticated: true }]) {
      const server = new WorkflowServer({ workflows: { hr: firingAgent([]) }, store: "memory:", ...options });
      try {
        const { port } = await server.listen({ port: 0, host: "0.0.0.0" });
        expect((await send(port, `127.0.0.1:${port}`, "GET", "/api/health")).status).toBe(200);
      } finally {
        await server.close();
      }
    }
  });
});

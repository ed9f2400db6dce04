/**
 * Who can reach a WorkflowServer: a web page using DNS rebinding (its own name resolving to
 * 127.0.0.1) sends that name in `Host`, and a default server answers it nothing; a server
 * other machines reach needs a token or the operator's explicit word.
 */
import { request } from "node:http";
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

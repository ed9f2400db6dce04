// An HR assistant that fires an employee over a REST API: the agent gets one tool for the
// whole API (restApiTool, named call_rest_api), looks the employee up page by page, and the
// DELETE waits for a human's yes. The HR API is a small server this example starts on
// 127.0.0.1; a ScriptedLLM plays the model's part so the run is the same every time.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { FunctionOutputEvent, ToolApprovalEvent, ToolApprovalRequestEvent } from "stepflow/events";
import { ScriptedLLM } from "stepflow/llm/scripted";
import { restApiTool } from "stepflow/tools/rest-api";
import { FunctionCallingAgent } from "stepflow/workflows/function-calling-agent";

// The HR API: GET /api/users?page=N (six employees a page), DELETE /api/users/{id}.
const names = ["George Bluth", "Janet Weaver", "Emma Wong", "Eve Holt", "Charles Morris", "Tracey Ramos", "Michael Lawson", "Lindsay Ferguson", "Tobias Funke"];
const users = names.map((name, i) => ({ id: i + 1, name }));
const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://hr");
  console.log(`HR API got ${req.method} ${url.pathname}${url.search}`);
  const send = (status: number, body?: unknown) =>
    res.writeHead(status, { "content-type": "application/json" }).end(body === undefined ? "" : JSON.stringify(body));
  if (req.headers.authorization !== "Bearer hr-secret") return send(401, { error: "wrong API key" });
  const page = Number(url.searchParams.get("page") ?? 1);
  if (req.method === "GET" && url.pathname === "/api/users") return send(200, { page, total_pages: 2, data: users.slice((page - 1) * 6, page * 6) });
  const id = Number(/^\/api\/users\/(\d+)$/.exec(url.pathname)?.[1]);
  const index = users.findIndex((user) => user.id === id);
  if (req.method === "DELETE" && index >= 0) return (users.splice(index, 1), send(204));
  send(404, { error: "not found" });
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const hr = restApiTool({
  baseURL,
  description: "The HR API. GET /api/users?page=N lists employees, 6 a page; DELETE /api/users/{id} removes one.",
  headers: { authorization: "Bearer hr-secret" }, // sent with each request, never shown to the model
});

const llm = new ScriptedLLM([
  { toolCalls: [{ name: "call_rest_api", input: { method: "GET", path: "/api/users?page=1" } }] },
  { toolCalls: [{ name: "call_rest_api", input: { method: "GET", path: "/api/users?page=2" } }] },
  { toolCalls: [{ name: "call_rest_api", input: { method: "DELETE", path: "/api/users/7" } }] },
  { text: "Michael Lawson (id 7) has been removed from the HR system." },
]);

const agent = new FunctionCallingAgent({
  llm,
  tools: [hr],
  // Reading is fine; anything that changes data waits for a human.
  needsApproval: (call) => (call.input as { method?: string }).method !== "GET",
});

const handler = agent.run({ input: "Fire Lawson" });
for await (const ev of handler.streamEvents()) {
  if (ev instanceof ToolApprovalRequestEvent) {
    console.log(`asked: ${ev.prefix}`);
    const approved = true; // a real app asks a person here
    handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved }));
  }
  if (ev instanceof FunctionOutputEvent) {
    const text = ev.output.content;
    console.log(`model reads: ${text.length > 60 ? `${text.slice(0, 60)}…` : text}`);
  }
}
const { response } = await handler;
console.log(`agent: ${String(response.content)}`);
console.log(`employees left: ${users.length}; Lawson still there: ${users.some((user) => user.name.endsWith("Lawson"))}`);
server.close();

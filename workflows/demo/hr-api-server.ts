/**
 * The HR demo API, which `stepflow --hr-demo` starts for the chat to work on: the HR REST API of seed 000 (reqres.in's users) on 127.0.0.1: twelve users, six a page,
 * that can be listed, read, created, updated and deleted. Deletes really delete, so a test
 * can check what an agent did; every request is recorded. Like careless real APIs, it repeats
 * what it was sent: `/api/echo` returns the request's headers and URL, `/api/login-redirect`
 * redirects to a URL carrying the request's query, and a 404 names the URL asked for.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** An employee of the HR demo API. @example `const lawson: HrUser = { id: 7, email: "michael.lawson@reqres.in", first_name: "Michael", last_name: "Lawson" };` */
export interface HrUser {
  readonly id: number;
  readonly email: string;
  readonly first_name: string;
  readonly last_name: string;
}

const NAMES = [
  ["George", "Bluth"],
  ["Janet", "Weaver"],
  ["Emma", "Wong"],
  ["Eve", "Holt"],
  ["Charles", "Morris"],
  ["Tracey", "Ramos"],
  ["Michael", "Lawson"],
  ["Lindsay", "Ferguson"],
  ["Tobias", "Funke"],
  ["Byron", "Fields"],
  ["George", "Edwards"],
  ["Rachel", "Howell"],
] as const;
const PER_PAGE = 6;

/** A running HR demo API. @example `const hr: HrApiServer = await startHrApiServer(); await hr.close();` */
export interface HrApiServer {
  /** e.g. `http://127.0.0.1:41234`: the API's paths start with /api. */
  readonly baseURL: string;
  readonly users: HrUser[];
  /** Every request: method, path with query, the authorization and idempotency-key headers, the JSON body if any. */
  readonly requests: { method: string; path: string; authorization: string | undefined; idempotencyKey: string | undefined; body: unknown }[];
  close(): Promise<void>;
}

/**
 * @example
 * const hr = await startHrApiServer({ apiKey: "hr-secret" });
 * await fetch(`${hr.baseURL}/api/users?page=2`, { headers: { authorization: "Bearer hr-secret" } });
 * await hr.close();
 */
export async function startHrApiServer(options: { apiKey?: string; port?: number } = {}): Promise<HrApiServer> {
  const users: HrUser[] = NAMES.map(([first, last], i) => ({
    id: i + 1,
    email: `${first.toLowerCase()}.${last.toLowerCase()}@reqres.in`,
    first_name: first,
    last_name: last,
  }));
  const requests: HrApiServer["requests"] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (raw += chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://hr");
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        res.writeHead(400, { "content-type": "application/json" });
        return res.end(JSON.stringify({ error: "The body is not JSON." }));
      }
      const idempotencyKey = req.headers["idempotency-key"];
      requests.push({
        method: req.method ?? "",
        path: `${url.pathname}${url.search}`,
        authorization: req.headers.authorization,
        idempotencyKey: typeof idempotencyKey === "string" ? idempotencyKey : undefined,
        body,
      });
      const send = (status: number, payload?: unknown) => {
        res.writeHead(status, payload === undefined ? {} : { "content-type": "application/json" });
        res.end(payload === undefined ? undefined : JSON.stringify(payload));
      };
      if (url.pathname === "/api/echo") return send(200, { method: req.method, url: req.url, headers: req.headers });
      if (url.pathname === "/api/login-redirect") {
        res.writeHead(302, { location: `https://login.example.com/start${url.search}` });
        return res.end();
      }
      if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) return send(401, { error: "Missing or wrong API key" });
      const one = /^\/api\/users\/(\d+)$/.exec(url.pathname);
      const index = one ? users.findIndex((user) => user.id === Number(one[1])) : -1;
      if (url.pathname === "/api/users" && req.method === "GET") {
        const page = Math.max(1, Number(url.searchParams.get("page") ?? 1) || 1);
        return send(200, {
          page,
          per_page: PER_PAGE,
          total: users.length,
          total_pages: Math.ceil(users.length / PER_PAGE),
          data: users.slice((page - 1) * PER_PAGE, page * PER_PAGE),
        });
      }
      if (url.pathname === "/api/users" && req.method === "POST") {
        const created = { ...(body as object), id: Math.max(0, ...users.map((user) => user.id)) + 1 } as HrUser;
        users.push(created);
        return send(201, created);
      }
      if (!one || index < 0) return send(404, { error: `Not found: ${req.url ?? ""}` });
      if (req.method === "GET") return send(200, { data: users[index] });
      if (req.method === "PUT" || req.method === "PATCH") {
        users[index] = { ...(users[index] as HrUser), ...(body as object) };
        return send(200, users[index]);
      }
      if (req.method === "DELETE") {
        users.splice(index, 1);
        return send(204);
      }
      return send(405, { error: `${req.method} is not allowed here` });
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    users,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The HR API's OpenAPI 3 document, as such an API would publish it. @example `restApiTool({ baseURL: hr.baseURL, openApi: hrOpenApi })` */
export const hrOpenApi = {
  openapi: "3.0.3",
  info: { title: "HR API", description: "Employees of the company." },
  paths: {
    "/api/users": {
      get: { summary: "List employees, 6 a page.", parameters: [{ name: "page", in: "query", schema: { type: "integer" } }] },
      post: { summary: "Add an employee.", requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/NewUser" } } } } },
    },
    "/api/users/{id}": {
      parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
      get: { summary: "Read one employee." },
      patch: { summary: "Change an employee.", requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/NewUser" } } } } },
      delete: { summary: "Remove an employee (fire them)." },
    },
  },
  components: {
    schemas: {
      NewUser: {
        type: "object",
        required: ["first_name", "last_name"],
        properties: { first_name: { type: "string" }, last_name: { type: "string" }, email: { type: "string" } },
      },
    },
  },
} as const;

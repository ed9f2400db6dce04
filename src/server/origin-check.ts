/**
 * Which web pages may send a server without a token a request that changes something: against
 * cross-site request forgery. A page of any site can make the browser POST to
 * `http://127.0.0.1:PORT` (a form, or `fetch` with `mode: "no-cors"`): the browser sends the
 * server's own name as `Host`, which the Host check takes, and a route that reads no JSON body
 * (cancel) has nothing else that tells it apart. The page cannot read the answer, but the run
 * is cancelled all the same. The browser names the page's origin in `Origin` on every such
 * request; this check takes the server's own origin, the origins CORS allows, and the names the
 * operator allows.
 *
 * Hand-rolled: Hono's `csrf` middleware judges only form and text bodies, and a cancel has none.
 */
import type { MiddlewareHandler } from "hono";

/**
 * The origins taken besides the server's own: those of the `cors` option, and the names of
 * `allowedHosts` (a proxy that forwards under its own name). `"*"` in either takes any.
 * @example
 * const rule: OriginRule = { corsOrigins: ["http://app.example"], allowedHosts: ["stepflow.internal"] };
 */
export interface OriginRule {
  readonly corsOrigins?: readonly string[] | undefined;
  readonly allowedHosts?: readonly string[] | undefined;
}

/**
 * Whether a request from `origin` (an `Origin` header) to a server reached as `host` (its `Host`
 * header) may change something: the same host and port, an origin CORS allows, or a name the
 * operator allows. `"null"` (a sandboxed frame, a file) is another origin.
 * @example
 * originAllowed("http://127.0.0.1:8787", "127.0.0.1:8787", {}); // true
 * originAllowed("https://attacker.example", "127.0.0.1:8787", {}); // false
 */
export function originAllowed(origin: string, host: string | undefined, rule: OriginRule): boolean {
  if (rule.corsOrigins?.some((allowed) => allowed === "*" || allowed === origin)) return true;
  let from: URL;
  try {
    from = new URL(origin);
  } catch {
    return false; // "null", or not an origin at all
  }
  if (from.protocol !== "http:" && from.protocol !== "https:") return false;
  const name = from.hostname.toLowerCase();
  for (const allowed of rule.allowedHosts ?? []) {
    const entry = allowed.toLowerCase();
    if (entry === "*" || entry === name || (entry.startsWith(".") && (name === entry.slice(1) || name.endsWith(entry)))) return true;
  }
  if (host === undefined) return false;
  let to: URL;
  try {
    to = new URL(`${from.protocol}//${host}`);
  } catch {
    return false;
  }
  // Both read by the URL parser with the origin's scheme: its default port is left out of either.
  // The scheme is not compared: behind a proxy that ends TLS, the page is https and the server is not.
  return to.host === from.host;
}

/**
 * Middleware that answers 403 `cross_origin_refused`, in JSON, to a POST (or any method but
 * GET, HEAD and OPTIONS) whose `Origin` is not allowed. A request without `Origin` is not a
 * browser's cross-site one (browsers send it with every POST) and goes on.
 * @example
 * app.use("/api/*", originCheck({ corsOrigins: ["http://app.example"] }));
 */
export function originCheck(rule: OriginRule): MiddlewareHandler {
  return async (c, next) => {
    const method = c.req.method;
    const origin = c.req.header("Origin");
    if (method === "GET" || method === "HEAD" || method === "OPTIONS" || origin === undefined) return next();
    if (originAllowed(origin, c.req.header("Host"), rule)) return next();
    const message = `This server does not take ${method} requests from web pages of another origin (${JSON.stringify(origin)}): without a token, a page of any site could make a browser send them. Use the server's own web page, send the request from a program (without an Origin header), name the page's origin in cors (--cors), or start the server with a token (--token).`;
    return c.json({ error: { code: "cross_origin_refused", message } }, 403);
  };
}

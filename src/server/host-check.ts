/**
 * Which `Host` a request may name, against DNS rebinding: a web page on another site can make
 * its own name resolve to 127.0.0.1 and then read and drive a server there as "same origin",
 * but the browser still sends that name in `Host`. A server without a token answers only names
 * that cannot be an attacker's: loopback names, IP addresses, the name it was bound to, and
 * the names its operator allows.
 *
 * Hand-rolled: Hono has no Host check, and the rule (which names are safe) is ours to state.
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { Context, MiddlewareHandler } from "hono";

/**
 * What a server accepts in `Host`: `"*"` in the list turns the check off (a proxy in front
 * checks it); a name with a leading dot (`.example.com`) also allows its subdomains.
 * @example
 * const rule: HostRule = { allowedHosts: ["stepflow.internal"], boundHost: () => "127.0.0.1" };
 */
export interface HostRule {
  readonly allowedHosts?: readonly string[] | undefined;
  /** The host the server listens on, once it does (its name is allowed too). */
  readonly boundHost?: (() => string | undefined) | undefined;
}

/**
 * Whether `host` (a `Host` header's name, without the port) is one a rebinding page cannot
 * send: `localhost` and its subdomains (RFC 6761 keeps them on this machine), any IP address
 * (rebinding needs a name it controls), the bound name and the operator's names.
 * @example
 * hostAllowed("localhost", {}); // true
 * hostAllowed("rebind.attacker.example", {}); // false
 */
export function hostAllowed(host: string, rule: HostRule): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (isIP(name.replace(/^\[|\]$/g, "")) !== 0) return true;
  const bound = rule.boundHost?.()?.toLowerCase();
  if (bound !== undefined && bound === name) return true;
  for (const allowed of rule.allowedHosts ?? []) {
    const entry = allowed.toLowerCase();
    if (entry === "*" || entry === name || (entry.startsWith(".") && (name === entry.slice(1) || name.endsWith(entry)))) return true;
  }
  return false;
}

/**
 * A URL whose host is lowercase letters, digits, dots and dashes, with a port or not: its name
 * is the hostname the URL parser gives, unless it looks like a number (`0x7f.1`, `2130706433`),
 * which the parser reads as an IPv4 address. Such a name is not one `hostAllowed` accepts
 * unless written as the address itself (then both agree), and the parser is asked next.
 */
const SIMPLE_AUTHORITY = /^https?:\/\/([a-z0-9.-]+)(?::\d{1,5})?(?:[/?#]|$)/;

/**
 * Middleware that answers 421 (Misdirected Request), in JSON, to a request whose `Host` is not
 * allowed, saying how the operator allows it.
 * @example
 * app.use("*", hostCheck({ allowedHosts: ["stepflow.internal"] }));
 */
export function hostCheck(rule: HostRule): MiddlewareHandler {
  const anyHost = rule.allowedHosts?.includes("*") === true;
  return async (c, next) => {
    const incoming = incomingOf(c);
    // A request Node parsed must name its host in one Host header: @hono/node-server puts the
    // address the server listens on in the URL of one that names none (an empty Host, or an
    // HTTP/1.0 request without one), and that address would pass the check below.
    if (incoming && !anyHost) {
      const problem = hostHeaderProblem(incoming);
      if (problem !== undefined) return refuse(c, problem);
    }
    const url = c.req.url;
    // The usual name (`127.0.0.1:8787`, `localhost`) is read off the URL as it is; any other
    // (an IPv6 address, a name with characters the URL parser changes) is the URL parser's.
    const simple = SIMPLE_AUTHORITY.exec(url)?.[1];
    let host = simple;
    if (simple === undefined || !hostAllowed(simple, rule)) {
      host = new URL(url).hostname;
      if (!hostAllowed(host, rule)) return refuse(c, `the host ${JSON.stringify(host)}`, host);
    }
    // A request line with a whole URL (`GET http://localhost/ HTTP/1.1`) names its host there,
    // and the URL is built from it: the Host header it also sends must pass too.
    if (incoming && !anyHost && incoming.url?.[0] !== "/" && incoming.headers.host !== undefined) {
      const named = hostnameOf(incoming.headers.host);
      if (named === undefined || !hostAllowed(named, rule)) return refuse(c, `the host ${JSON.stringify(incoming.headers.host)}`, named);
    }
    return next();
  };
}

/** Node's request under a Hono request, when @hono/node-server serves it (not for `app.fetch` of a `Request`). */
function incomingOf(c: Context): IncomingMessage | undefined {
  const env = c.env as { incoming?: unknown } | undefined;
  return typeof env === "object" && env !== null && typeof (env.incoming as IncomingMessage | undefined)?.rawHeaders === "object"
    ? (env.incoming as IncomingMessage)
    : undefined;
}

/** What is wrong with a request's Host headers (none, an empty one, several), or undefined when it has one with a value. */
function hostHeaderProblem(incoming: IncomingMessage): string | undefined {
  const raw = incoming.rawHeaders;
  let count = 0;
  // Node keeps the first of several Host headers: a request with two would be checked for one and may be routed by the other.
  for (let i = 0; i < raw.length; i += 2) if ((raw[i] as string).length === 4 && (raw[i] as string).toLowerCase() === "host") count++;
  if (count > 1) return `${count} Host headers`;
  if (count === 0) return "no Host header";
  if ((incoming.headers.host ?? "").trim() === "") return "an empty Host header";
  return undefined;
}

/** The name in a Host header's value (without its port), as the URL parser reads it; undefined when it is not a host. */
function hostnameOf(value: string): string | undefined {
  try {
    return new URL(`http://${value}/`).hostname;
  } catch {
    return undefined;
  }
}

/** The 421 for a request naming `what`: what to do, and (for a name) how to allow it. */
function refuse(c: Context, what: string, name?: string): Response {
  const allow =
    name !== undefined && name !== ""
      ? `, or allow the name (--allowed-host ${name}, or allowedHosts: [${JSON.stringify(name)}])`
      : ', or, behind a proxy that checks Host itself, allow any (--allowed-host "*", or allowedHosts: ["*"])';
  const hint = name === undefined ? " Send one Host header naming the server, as browsers and HTTP/1.1 clients do." : "";
  const message = `This server does not answer requests for ${what}: without a token it answers only localhost, IP addresses and the names it is told.${hint} Open it at http://127.0.0.1 or http://localhost, or start it with a token (--token, or token in WorkflowServer's options)${allow}.`;
  return c.json({ error: { code: "host_not_allowed", message } }, 421);
}

/**
 * Whether `host` (an address to listen on) is reached only from this machine.
 * @example isLoopbackHost("127.0.0.1"); // true; isLoopbackHost("0.0.0.0"); // false
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "");
  return name === "localhost" || name === "::1" || /^127\.\d+\.\d+\.\d+$/.test(name) || /^::ffff:127\.\d+\.\d+\.\d+$/.test(name);
}

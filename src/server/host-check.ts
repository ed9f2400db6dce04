/**
 * Which `Host` a request may name, against DNS rebinding: a web page on another site can make
 * its own name resolve to 127.0.0.1 and then read and drive a server there as "same origin",
 * but the browser still sends that name in `Host`. A server without a token answers only names
 * that cannot be an attacker's: loopback names, IP addresses, the name it was bound to, and
 * the names its operator allows.
 *
 * Hand-rolled: Hono has no Host check, and the rule (which names are safe) is ours to state.
 */
import { isIP } from "node:net";
import type { MiddlewareHandler } from "hono";

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
  return async (c, next) => {
    const url = c.req.url;
    // The usual name (`127.0.0.1:8787`, `localhost`) is read off the URL as it is; any other
    // (an IPv6 address, a name with characters the URL parser changes) is the URL parser's.
    const simple = SIMPLE_AUTHORITY.exec(url)?.[1];
    if (simple !== undefined && hostAllowed(simple, rule)) return next();
    const host = new URL(url).hostname;
    if (hostAllowed(host, rule)) return next();
    const message = `This server does not answer requests for the host ${JSON.stringify(host)}: without a token it answers only localhost, IP addresses and the names it is told. Open it at http://127.0.0.1 or http://localhost, or start it with a token (--token, or token in WorkflowServer's options), or allow the name (--allowed-host ${host}, or allowedHosts: [${JSON.stringify(host)}]).`;
    return c.json({ error: { code: "host_not_allowed", message } }, 421);
  };
}

/**
 * Whether `host` (an address to listen on) is reached only from this machine.
 * @example isLoopbackHost("127.0.0.1"); // true; isLoopbackHost("0.0.0.0"); // false
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "");
  return name === "localhost" || name === "::1" || /^127\.\d+\.\d+\.\d+$/.test(name) || /^::ffff:127\.\d+\.\d+\.\d+$/.test(name);
}

/**
 * Whether a request path fits an OpenAPI path template (`/api/users/{id}`), in time linear in
 * the path for a given template. A template turned into a regular expression backtracks: with
 * many parameters in one segment (`/{a}{b}{c}…`) and a path chosen by the model, matching took
 * tens of seconds and blocked the event loop, timeouts included.
 */

/** One step of a template: a literal character, a `{name}` (one or more characters but `/`) or a `{name+}` (one or more of any). */
type Token = { readonly kind: "char"; readonly char: string } | { readonly kind: "segment" } | { readonly kind: "rest" };

/**
 * A test of request paths against `template`: `{name}` matches one segment or part of one,
 * `{name+}` (API Gateway's greedy parameter) the rest of the path, a trailing slash is optional,
 * and every other character is itself.
 * @example
 * const matches = pathTemplateMatcher("/api/users/{id}");
 * matches("/api/users/7"); // true
 * matches("/api/users/7/"); // true
 * matches("/api/users"); // false
 */
export function pathTemplateMatcher(template: string): (path: string) => boolean {
  const tokens = templateTokens(template.length > 1 ? template.replace(/\/+$/, "") : template);
  return (path) => fits(tokens, path) || (path.length > 1 && path.endsWith("/") && fits(tokens, path.slice(0, -1)));
}

function templateTokens(template: string): Token[] {
  const tokens: Token[] = [];
  for (const part of template.split(/(\{[^}]+\})/)) {
    if (part.startsWith("{") && part.endsWith("}")) tokens.push(part.endsWith("+}") ? { kind: "rest" } : { kind: "segment" });
    else for (const char of part) tokens.push({ kind: "char", char });
  }
  return tokens;
}

/**
 * Runs the template as a nondeterministic automaton over `path`, all of its states at once
 * (Thompson's construction): each character of the path is looked at once per state, so the
 * time is at most the path's length times the template's, with no backtracking. State `i` is
 * "before token i"; a parameter token loops on itself, so it takes one or more characters.
 */
function fits(tokens: readonly Token[], path: string): boolean {
  let states = new Uint8Array(tokens.length + 1);
  let next = new Uint8Array(tokens.length + 1);
  states[0] = 1;
  for (const char of path) {
    next.fill(0);
    let alive = false;
    for (let i = 0; i < tokens.length; i++) {
      if (states[i] === 0) continue;
      const token = tokens[i] as Token;
      if (token.kind === "char" ? token.char === char : token.kind === "rest" || char !== "/") {
        next[i + 1] = 1;
        if (token.kind !== "char") next[i] = 1;
        alive = true;
      }
    }
    if (!alive) return false;
    [states, next] = [next, states];
  }
  return states[tokens.length] === 1;
}

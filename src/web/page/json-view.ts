/**
 * A JSON value as a tree a reader can fold: objects and arrays are `<details>` (open down to
 * `openDepth`), scalars are coloured by type, so a result reads as data, not as one long line.
 */
import { h } from "./dom.ts";

/** A folding view of `value`. */
export function jsonView(value: unknown, openDepth = 2): HTMLElement {
  return h("div", { class: "json-view" }, node(value, openDepth, 0));
}

function node(value: unknown, openDepth: number, depth: number): HTMLElement {
  if (value === null || typeof value !== "object") return scalar(value);
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value as Record<string, unknown>);
  const open = Array.isArray(value) ? "[" : "{";
  const close = Array.isArray(value) ? "]" : "}";
  if (entries.length === 0) return h("span", { class: "json-empty" }, `${open}${close}`);
  const count = Array.isArray(value)
    ? `${entries.length} ${entries.length === 1 ? "item" : "items"}`
    : `${entries.length} ${entries.length === 1 ? "key" : "keys"}`;
  return h(
    "details",
    { open: depth < openDepth },
    h("summary", {}, `${open} `, h("span", { class: "json-count" }, count), ` ${close}`),
    h(
      "ul",
      {},
      ...entries.map(([key, child]) =>
        h("li", {}, h("span", { class: "json-key" }, Array.isArray(value) ? `${key}:` : `${JSON.stringify(key)}:`), " ", node(child, openDepth, depth + 1)),
      ),
    ),
  );
}

function scalar(value: unknown): HTMLElement {
  const kind = value === null ? "null" : typeof value;
  return h("span", { class: `json-${kind}` }, value === undefined ? "undefined" : JSON.stringify(value));
}

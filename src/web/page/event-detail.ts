/**
 * What an event carried, readable: its fields as a folding tree, a tool's output parsed when it
 * is JSON (a tool's answer is text that is often JSON), a stack as lines. Everything the server
 * sends is shown as text, never as markup: a stack or a result may hold anything.
 */
import type { StreamedEvent } from "./api.ts";
import { h } from "./dom.ts";
import { jsonView } from "./json-view.ts";

/** `value` as a reader wants it: JSON text as a tree that folds, other text whole and wrapped. */
export function readable(value: unknown, openDepth = 1): HTMLElement {
  if (typeof value !== "string") return jsonView(value, openDepth);
  const text = value.trim();
  if (text.startsWith("{") || text.startsWith("[")) {
    try {
      return jsonView(JSON.parse(text) as unknown, openDepth);
    } catch {
      // Not JSON after all: shown as the text it is.
    }
  }
  return h("pre", { class: "plain" }, value);
}

/** A stack as the server recorded it, as text. */
export function stackView(stack: string): HTMLElement {
  return h("pre", { class: "stack", "aria-label": "Stack" }, stack);
}

/** The details of one event: its fields, with a tool's output, an event sent in and a failed step's stack made readable. */
export function eventDetail(ev: StreamedEvent): HTMLElement {
  const { stack, ...fields } = ev.data;
  if (ev.type === "EventReceivedEvent") {
    // What arrived, as a tree: the event's own fields, each JSON text among them parsed as a tool's output is.
    const data = ev.data.data;
    const shown =
      data !== null && typeof data === "object" && !Array.isArray(data)
        ? h("div", { class: "received-fields" }, ...Object.entries(data).map(([key, value]) => h("div", {}, h("code", {}, key), readable(value, 2))))
        : readable(data ?? null, 2);
    return h("div", { class: "event-detail" }, h("p", { class: "received-from" }, `${String(ev.data.type)} ${sender(ev.data)}`), shown);
  }
  if (ev.type === "agent.FunctionOutputEvent") {
    const output = ev.data.output as { toolName?: string; content?: unknown; isError?: boolean } | undefined;
    if (output && typeof output === "object") {
      const { content, ...rest } = output;
      return h(
        "div",
        { class: "event-detail" },
        h("p", { class: output.isError ? "tool-output error" : "tool-output" }, `${output.toolName ?? "tool"} ${output.isError ? "failed" : "returned"}:`),
        readable(content ?? null, 2),
        h("details", {}, h("summary", {}, "Other fields"), jsonView(rest, 1)),
      );
    }
  }
  return h("div", { class: "event-detail" }, jsonView(fields, 1), typeof stack === "string" ? stackView(stack) : null);
}

/** Who sent an event in, as the server recorded it: the principal it vouches for, then the client's own label. */
export function sender(d: StreamedEvent["data"]): string {
  if (typeof d.by !== "string") return "sent in";
  return `from ${d.by}${typeof d.label === "string" ? ` (${d.label})` : ""}`;
}

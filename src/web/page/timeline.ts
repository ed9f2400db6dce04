/**
 * A run's timeline: the steps as bars on one time axis (from the engine's
 * `StepStateChangedEvent`s: started → finished, failed, or cancelled when the run failed while
 * it executed), and every event in order with the
 * time since the run started.
 */
import type { StreamedEvent } from "./api.ts";
import { brief, h } from "./dom.ts";
import { eventDetail, sender } from "./event-detail.ts";

/** One execution of a step. */
export interface StepSpan {
  readonly step: string;
  readonly attempt: number;
  readonly start: number;
  /** Undefined while the step runs. */
  readonly end: number | undefined;
  readonly state: "running" | "finished" | "failed" | "cancelled";
}

/** The step executions of a run, paired from their started and finished/failed/cancelled events, in start order. */
export function stepSpans(events: readonly StreamedEvent[]): StepSpan[] {
  const spans: StepSpan[] = [];
  const open = new Map<string, number[]>();
  for (const ev of events) {
    if (ev.type !== "StepStateChangedEvent") continue;
    const step = String(ev.data.step);
    const attempt = Number(ev.data.attempt ?? 1);
    const key = `${step}\u0000${attempt}`;
    const at = Date.parse(ev.at);
    if (ev.data.state === "started") {
      open.set(key, [...(open.get(key) ?? []), spans.length]);
      spans.push({ step, attempt, start: at, end: undefined, state: "running" });
    } else if (ev.data.state === "finished" || ev.data.state === "failed" || ev.data.state === "cancelled") {
      const index = open.get(key)?.shift();
      const span = index === undefined ? undefined : spans[index];
      if (index !== undefined && span) spans[index] = { ...span, end: at, state: ev.data.state };
    }
  }
  // Once the run has ended nothing runs: a step whose end was not recorded (a run saved by an
  // older server) was cut off with it.
  const ended = events.findLast((ev) => ev.type === "RunEndedEvent");
  if (ended) {
    const at = Date.parse(ended.at);
    return spans.map((span) => (span.state === "running" ? { ...span, end: at, state: "cancelled" } : span));
  }
  return spans;
}

const ms = (value: number) => (value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`);

/** The timeline of `events`: step bars, then the event list. */
export function renderTimeline(events: readonly StreamedEvent[]): HTMLElement {
  if (events.length === 0) return h("p", { class: "muted" }, "No events yet.");
  const first = Date.parse((events[0] as StreamedEvent).at);
  const last = Math.max(...events.map((ev) => Date.parse(ev.at)));
  const spans = stepSpans(events);
  const total = Math.max(1, last - first);
  const bars = h(
    "ol",
    { class: "spans", "aria-label": "Step timings" },
    ...spans.map((span) => {
      const end = span.end ?? last;
      const left = ((span.start - first) / total) * 100;
      const width = Math.max(0.5, ((end - span.start) / total) * 100);
      const duration = span.end === undefined ? "running" : ms(span.end - span.start);
      return h(
        "li",
        { class: `span ${span.state}` },
        h("span", { class: "span-name" }, span.step, span.attempt > 1 ? ` (attempt ${span.attempt})` : ""),
        h(
          "span",
          { class: "span-track", "aria-hidden": "true" },
          h("span", { class: "span-bar", style: `left:${left}%;width:${Math.min(width, 100 - left)}%` }),
        ),
        h("span", { class: "span-time" }, duration),
      );
    }),
  );
  const rows = events.map((ev) =>
    h(
      "tr",
      { class: rowClass(ev), "data-seq": ev.seq },
      h("td", { class: "num" }, ev.seq),
      h("td", { class: "num" }, `+${ms(Date.parse(ev.at) - first)}`),
      h("td", {}, h("code", {}, ev.type)),
      h("td", { class: "data" }, expandable(ev)),
    ),
  );
  return h(
    "div",
    { class: "timeline" },
    spans.length > 0 ? bars : h("p", { class: "muted" }, "This run recorded no step timings."),
    h(
      "table",
      { class: "events" },
      h("caption", { class: "visually-hidden" }, "Events of the run"),
      h(
        "thead",
        {},
        h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Time"), h("th", { scope: "col" }, "Event"), h("th", { scope: "col" }, "Data")),
      ),
      h("tbody", {}, ...rows),
    ),
  );
}

/** A row's class: a failed step, a human's decision, an event sent in from outside. */
function rowClass(ev: StreamedEvent): string | undefined {
  if (ev.type === "ApprovalDecision") return ev.data.approved === true ? "decision approved" : "decision denied";
  if (ev.type === "EventReceivedEvent") return "received";
  if (ev.type === "StepStateChangedEvent" && ev.data.state === "failed") return "failed";
  return undefined;
}

/**
 * The event's line, which opens to all it carried. The details are built when first opened
 * (a run streams hundreds of tokens); a failed step's are open, its stack in view.
 */
function expandable(ev: StreamedEvent): HTMLElement {
  const open = ev.type === "StepStateChangedEvent" && typeof ev.data.stack === "string";
  const details = h("details", { class: "event", open }, h("summary", {}, summary(ev)));
  if (open) details.append(eventDetail(ev));
  else
    details.addEventListener("toggle", () => {
      if (details.childElementCount === 1) details.append(eventDetail(ev));
    });
  return details;
}

/** What an event says, in a line. */
export function summary(ev: StreamedEvent): string {
  const d = ev.data;
  switch (ev.type) {
    case "ApprovalDecision":
      return `${d.approved === true ? "Approved" : "Denied"} by ${String(d.by)}${d.label ? ` (${String(d.label)})` : ""}${d.reason ? `: ${String(d.reason)}` : ""}${
        d.question ? ` — ${brief(d.question, 120)}` : ""
      }`;
    case "EventReceivedEvent":
      return `${String(d.type)} ${sender(d)}: ${brief(d.data, 160)}`;
    case "WorkflowIdleEvent":
      return "Waiting for input";
    case "StepStateChangedEvent":
      return `${String(d.step)} ${String(d.state)}${d.error ? `: ${brief(d.error, 120)}` : ""}`;
    case "agent.StreamEvent":
      return JSON.stringify(d.delta);
    case "agent.ToolCallEvent":
      return ((d.toolCalls as { name: string; input: unknown }[] | undefined) ?? []).map((c) => `${c.name}(${brief(c.input, 80)})`).join(", ");
    case "agent.FunctionOutputEvent": {
      const output = d.output as { toolName?: string; content?: string } | undefined;
      return `${output?.toolName ?? "?"} → ${brief(output?.content ?? "", 120)}`;
    }
    case "agent.ToolApprovalRequestEvent":
      return String(d.prefix);
    default:
      return brief(d, 200);
  }
}

/**
 * The run inspector: the runs the server knows, and for the one picked its workflow graph
 * (steps it went through marked), the timeline of its events with step timings, its result
 * (a failure with its stack), its saved context, the points an ended run can be forked from,
 * and a comparison with another run. A run still going is followed live.
 */
import { api, followEvents } from "./api.ts";
import type { HandlerInfo, StreamedEvent, WorkflowInfo } from "./api.ts";
import { approvalBox } from "./approval.ts";
import type { ApprovalRequest } from "./approval.ts";
import { renderComparison } from "./compare.ts";
import { brief, byId, h } from "./dom.ts";
import { stackView } from "./event-detail.ts";
import { drawGraph, markedGraph } from "./graph.ts";
import { jsonView } from "./json-view.ts";
import { renderTimeline, stepSpans } from "./timeline.ts";

export interface Inspector {
  /** Shows the runs, and `handlerId`'s details if given. */
  open(handlerId?: string): Promise<void>;
}

const time = (iso: string) => new Date(iso).toLocaleTimeString();

/** What the drawing shows, in words: the workflow and the steps this run went through. */
function graphLabel(workflow: string, spans: readonly { step: string }[]): string {
  const steps = [...new Set(spans.map((span) => span.step))];
  return `Graph of the workflow ${workflow}${steps.length > 0 ? `; this run went through ${steps.join(", ")}` : ""}.`;
}

/** Wires the inspector panel of index.html. */
export function mountInspector(workflows: () => readonly WorkflowInfo[]): Inspector {
  const list = byId<HTMLElement>("runs");
  const detail = byId<HTMLElement>("run-detail");
  let selected: string | undefined;
  let following: AbortController | undefined;

  async function refreshList(): Promise<void> {
    let handlers: HandlerInfo[];
    try {
      handlers = await api.handlers();
    } catch (error) {
      list.replaceChildren(h("li", { class: "error", role: "alert" }, error instanceof Error ? error.message : String(error)));
      return;
    }
    if (handlers.length === 0) {
      list.replaceChildren(h("li", { class: "muted" }, "No runs yet: send a message in the chat."));
      return;
    }
    list.replaceChildren(
      ...handlers.map((handler) =>
        h(
          "li",
          {},
          h(
            "button",
            {
              type: "button",
              class: "run",
              "aria-current": handler.id === selected ? "true" : undefined,
              "data-handler": handler.id,
              onclick: () => void open(handler.id),
            },
            h("span", { class: `status ${handler.status}` }, handler.status),
            h("span", { class: "run-name" }, handler.workflow),
            h("span", { class: "run-input" }, brief((handler.input as { input?: unknown } | undefined)?.input ?? handler.input, 60)),
            h("time", { datetime: handler.createdAt }, time(handler.createdAt)),
          ),
        ),
      ),
    );
  }

  async function show(handlerId: string): Promise<void> {
    following?.abort();
    const mine = (following = new AbortController());
    detail.replaceChildren(h("p", { class: "muted" }, "Loading…"));
    const [handler, events] = await Promise.all([api.handler(handlerId), api.events(handlerId)]);
    if (mine.signal.aborted) return;
    const info = workflows().find((w) => w.name === handler.workflow);
    const header = h("header", { class: "run-header" });
    const graph = h("div", { class: "graph" });
    const timeline = h("div", {});
    const result = h("div", {});
    const context = h("pre", { class: "json" }, "Loading…");
    const forks = h("div", {});
    const compare = h("div", {});
    detail.replaceChildren(
      header,
      h("section", { "aria-labelledby": "graph-title" }, h("h3", { id: "graph-title" }, "Graph"), graph),
      h("section", { "aria-labelledby": "timeline-title" }, h("h3", { id: "timeline-title" }, "Timeline"), timeline),
      h("section", { "aria-labelledby": "result-title" }, h("h3", { id: "result-title" }, "Result"), result),
      h(
        "section",
        { "aria-labelledby": "context-title" },
        h("h3", { id: "context-title" }, "Saved context"),
        h("details", { class: "context" }, h("summary", {}, "The run's context as saved (JSON)"), context),
      ),
      h("section", { "aria-labelledby": "fork-title" }, h("h3", { id: "fork-title" }, "Fork"), forks),
      h("section", { "aria-labelledby": "compare-title" }, h("h3", { id: "compare-title" }, "Compare"), compare),
    );
    let current = handler;
    const answered = new Set<string>();
    const seen: StreamedEvent[] = [...events];
    let graphText = "";
    const render = async () => {
      header.replaceChildren(
        h("h2", {}, handler.workflow, " ", h("span", { class: `status ${current.status}` }, current.status)),
        h(
          "dl",
          {},
          h("dt", {}, "Run"),
          // The run's id, which its events carry too (older servers named handlers apart from runs).
          h("dd", {}, h("code", { class: "run-id" }, current.runId || current.id)),
          ...(current.forkedFrom
            ? [
                h("dt", {}, "Forked from"),
                h(
                  "dd",
                  { class: "forked-from" },
                  h("a", { href: `#runs/${encodeURIComponent(current.forkedFrom.handlerId)}` }, h("code", {}, current.forkedFrom.handlerId)),
                  ` at #${current.forkedFrom.seq} (${current.forkedFrom.label})`,
                ),
              ]
            : []),
          h("dt", {}, "Started"),
          h("dd", {}, h("time", { datetime: current.createdAt }, new Date(current.createdAt).toLocaleString())),
          h("dt", {}, "Input"),
          h("dd", {}, h("code", {}, brief(current.input, 300))),
        ),
        ...(current.status === "running" || current.status === "waiting"
          ? [h("button", { type: "button", class: "danger", onclick: () => void api.cancel(current.id).then(() => show(current.id)) }, "Cancel run")]
          : []),
        // Questions the run is waiting on, answerable here (the chat that asked may be gone).
        ...(current.waitingFor ?? [])
          .filter((ev) => ev.type === "agent.ToolApprovalRequestEvent" && !answered.has(String(ev.data.approvalId)))
          .map((ev) => approvalBox(current.id, ev.data as unknown as ApprovalRequest, () => answered.add(String(ev.data.approvalId)))),
      );
      timeline.replaceChildren(renderTimeline(seen));
      result.replaceChildren(
        ...(current.error
          ? [
              h("p", { class: "error" }, `${current.error.name}: ${current.error.message}`),
              ...(current.error.stack ? [h("details", { class: "stack-details", open: true }, h("summary", {}, "Stack"), stackView(current.error.stack))] : []),
            ]
          : current.result !== undefined
            ? [jsonView(current.result, 3)]
            : [h("p", { class: "muted" }, "Not finished.")]),
      );
      const text = info ? markedGraph(info.mermaid, stepSpans(seen)) : "";
      if (text !== graphText) {
        graphText = text;
        if (info) await drawGraph(graph, text, graphLabel(handler.workflow, stepSpans(seen)));
        else graph.replaceChildren(h("p", { class: "muted" }, `The server has no workflow named ${handler.workflow} any more.`));
      }
    };
    const loadContext = () =>
      api.context(handlerId).then(
        (saved) => (context.textContent = JSON.stringify(saved, null, 2)),
        (error: unknown) => (context.textContent = error instanceof Error ? error.message : String(error)),
      );
    const ended = () => current.status !== "running" && current.status !== "waiting";
    const loadForks = async () => {
      if (!ended()) return void forks.replaceChildren(h("p", { class: "muted" }, "Once the run has ended, it can be forked from the points it saved."));
      forks.replaceChildren(h("p", { class: "muted" }, "Loading…"));
      const points = await api.checkpoints(handlerId).catch((error: unknown) => error);
      if (mine.signal.aborted) return;
      if (!Array.isArray(points)) return void forks.replaceChildren(h("p", { class: "error" }, points instanceof Error ? points.message : String(points)));
      if (points.length === 0) return void forks.replaceChildren(h("p", { class: "muted" }, "This run saved no point to fork from."));
      const status = h("p", { role: "status" });
      forks.replaceChildren(
        h("p", { class: "muted" }, "Run it again from a point it saved: a new run, under a new id, whose steps work again and ask again for approvals."),
        h(
          "ol",
          { class: "checkpoints" },
          ...points.map((point) =>
            h(
              "li",
              {},
              h("span", { class: "num" }, `#${point.seq}`),
              " ",
              point.label,
              " ",
              h(
                "button",
                {
                  type: "button",
                  class: "secondary fork",
                  "aria-label": `Fork from #${point.seq}: ${point.label}`,
                  onclick: (event: Event) => {
                    const button = event.currentTarget as HTMLButtonElement;
                    button.disabled = true;
                    api.fork(handlerId, point.seq).then(
                      (fork) => (location.hash = `#runs/${encodeURIComponent(fork.id)}`),
                      (error: unknown) => {
                        button.disabled = false;
                        status.textContent = error instanceof Error ? error.message : String(error);
                      },
                    );
                  },
                },
                "Fork from here",
              ),
            ),
          ),
        ),
        status,
      );
    };
    const loadCompare = async () => {
      const others = (await api.handlers().catch(() => [] as HandlerInfo[])).filter((other) => other.id !== handlerId);
      if (mine.signal.aborted) return;
      if (others.length === 0) return void compare.replaceChildren(h("p", { class: "muted" }, "No other run to compare with."));
      // The run it was forked from first, then runs of the same workflow.
      const ranked = [
        ...others.filter((o) => o.id === current.forkedFrom?.handlerId),
        ...others.filter((o) => o.id !== current.forkedFrom?.handlerId && o.workflow === current.workflow),
        ...others.filter((o) => o.id !== current.forkedFrom?.handlerId && o.workflow !== current.workflow),
      ];
      const picker = h(
        "select",
        { id: "compare-with", "aria-label": "Run to compare with" },
        ...ranked.map((o) => h("option", { value: o.id }, `${o.workflow} · ${o.status} · ${time(o.createdAt)} · ${o.id.slice(0, 8)}`)),
      );
      const out = h("div", {});
      const go = async () => {
        out.replaceChildren(h("p", { class: "muted" }, "Loading…"));
        const other = ranked.find((o) => o.id === picker.value);
        if (!other) return;
        const [mineNow, theirs] = await Promise.all([api.events(handlerId), api.events(other.id)]);
        out.replaceChildren(renderComparison(current, mineNow, other, theirs));
      };
      compare.replaceChildren(
        h(
          "div",
          { class: "compare-form" },
          h("label", { for: "compare-with" }, "Compare this run (A) with (B) "),
          picker,
          h(
            "button",
            {
              type: "button",
              class: "secondary",
              id: "compare-go",
              onclick: () => void go().catch((error: unknown) => out.replaceChildren(h("p", { class: "error" }, String(error)))),
            },
            "Compare",
          ),
        ),
        out,
      );
    };
    await render();
    void loadContext();
    void loadForks();
    void loadCompare();
    if (current.status !== "running" && current.status !== "waiting") return;
    // Live: redraw as events come, at most once per animation frame.
    let pending = false;
    let stale = false;
    const after = seen.at(-1)?.seq ?? 0;
    try {
      await followEvents(
        handlerId,
        (ev) => {
          seen.push(ev);
          // A question asked, or a tool's result after one was answered: the run's status and open questions changed.
          if (ev.type === "agent.ToolApprovalRequestEvent" || ev.type === "agent.FunctionOutputEvent") stale = true;
          if (pending) return;
          pending = true;
          requestAnimationFrame(() => {
            pending = false;
            if (mine.signal.aborted) return;
            const refresh = stale ? api.handler(handlerId).then((latest) => void (current = latest)) : Promise.resolve();
            stale = false;
            void refresh.then(render, render);
          });
        },
        mine.signal,
        after,
      );
    } catch {
      if (mine.signal.aborted) return;
    }
    if (mine.signal.aborted) return;
    current = await api.handler(handlerId);
    await render();
    void loadContext();
    void loadForks();
    void refreshList();
  }

  async function open(handlerId?: string): Promise<void> {
    if (handlerId) selected = handlerId;
    await refreshList();
    if (selected) await show(selected).catch((error: unknown) => detail.replaceChildren(h("p", { class: "error", role: "alert" }, String(error))));
    else detail.replaceChildren(h("p", { class: "muted" }, "Pick a run to see its graph, timeline and saved context."));
  }

  byId<HTMLButtonElement>("runs-refresh").addEventListener("click", () => void open());
  return { open };
}

/**
 * Two runs' events side by side: the events both wrote in the same order line up, and what
 * differs stands out (an event changed, or written by one run only). Ids that every run makes
 * anew (run, approval and tool-call ids) and times do not count as differences.
 */
import type { HandlerInfo, StreamedEvent } from "./api.ts";
import { h } from "./dom.ts";
import { summary } from "./timeline.ts";

/** One row: an event of each run that match (`same`) or not (`changed`), or an event of one run only. */
export interface DiffRow {
  readonly kind: "same" | "changed" | "left" | "right";
  readonly left?: StreamedEvent;
  readonly right?: StreamedEvent;
}

/** Fields that differ from run to run by construction. */
const VOLATILE = new Set(["runId", "approvalId", "id", "toolCallId", "at", "stack"]);

function normalized(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalized);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([key]) => !VOLATILE.has(key))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, v]) => [key, normalized(v)]),
  );
}

const keyOf = (ev: StreamedEvent) => `${ev.type} ${JSON.stringify(normalized(ev.data))}`;

/** Above this many cells the longest common run is not worth its time: events are lined up by position. */
const MAX_CELLS = 4_000_000;

/** The rows comparing `a` with `b`: their longest common sequence of events, and between its events what differs. */
export function diffEvents(a: readonly StreamedEvent[], b: readonly StreamedEvent[]): DiffRow[] {
  const ka = a.map(keyOf);
  const kb = b.map(keyOf);
  const n = a.length;
  const m = b.length;
  const ops: ("same" | "left" | "right")[] = [];
  if (n * m > MAX_CELLS) {
    for (let i = 0; i < Math.max(n, m); i++) {
      if (i < n && i < m && ka[i] === kb[i]) ops.push("same");
      else {
        if (i < n) ops.push("left");
        if (i < m) ops.push("right");
      }
    }
  } else {
    // lengths[i][j]: the longest common sequence of a[i..] and b[j..].
    const lengths = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
      const row = lengths[i] as Uint32Array;
      const below = lengths[i + 1] as Uint32Array;
      for (let j = m - 1; j >= 0; j--) row[j] = ka[i] === kb[j] ? (below[j + 1] as number) + 1 : Math.max(below[j] as number, row[j + 1] as number);
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && ka[i] === kb[j]) {
        ops.push("same");
        i++;
        j++;
      } else if (j >= m || (i < n && ((lengths[i + 1] as Uint32Array)[j] as number) >= ((lengths[i] as Uint32Array)[j + 1] as number))) {
        ops.push("left");
        i++;
      } else {
        ops.push("right");
        j++;
      }
    }
  }
  // Between two matches, the events of each run pair up as changed; the rest are one run's only.
  const rows: DiffRow[] = [];
  let i = 0;
  let j = 0;
  let lefts: StreamedEvent[] = [];
  let rights: StreamedEvent[] = [];
  const flush = () => {
    const both = Math.min(lefts.length, rights.length);
    for (let k = 0; k < both; k++) rows.push({ kind: "changed", left: lefts[k], right: rights[k] });
    for (const left of lefts.slice(both)) rows.push({ kind: "left", left });
    for (const right of rights.slice(both)) rows.push({ kind: "right", right });
    lefts = [];
    rights = [];
  };
  for (const op of ops) {
    if (op === "same") {
      flush();
      rows.push({ kind: "same", left: a[i++], right: b[j++] });
    } else if (op === "left") lefts.push(a[i++] as StreamedEvent);
    else rights.push(b[j++] as StreamedEvent);
  }
  flush();
  return rows;
}

const cell = (ev: StreamedEvent | undefined) =>
  ev ? [h("td", { class: "num" }, ev.seq), h("td", {}, h("code", {}, ev.type), " ", summary(ev))] : [h("td", {}), h("td", { class: "muted" }, "—")];

const WORDS: Record<DiffRow["kind"], string> = { same: "same", changed: "differs", left: "only in A", right: "only in B" };

/** The comparison of run `a` with run `b`: counts, then the rows (only those that differ, unless asked for all). */
export function renderComparison(a: HandlerInfo, aEvents: readonly StreamedEvent[], b: HandlerInfo, bEvents: readonly StreamedEvent[]): HTMLElement {
  const rows = diffEvents(aEvents, bEvents);
  const count = (kind: DiffRow["kind"]) => rows.filter((row) => row.kind === kind).length;
  const differ = rows.length - count("same");
  const body = h("tbody", {});
  const all = h("input", { type: "checkbox", checked: differ === 0 });
  const fill = () =>
    body.replaceChildren(
      ...rows
        .filter((row) => all.checked || row.kind !== "same")
        .map((row) => h("tr", { class: `diff ${row.kind}` }, ...cell(row.left), ...cell(row.right), h("td", { class: "diff-kind" }, WORDS[row.kind]))),
    );
  all.addEventListener("change", fill);
  fill();
  return h(
    "div",
    { class: "comparison" },
    h(
      "p",
      { class: "diff-counts", role: "status" },
      differ === 0
        ? `The two runs wrote the same ${rows.length} events.`
        : `${count("same")} events the same; ${count("changed")} differ, ${count("left")} only in A, ${count("right")} only in B.`,
    ),
    h("label", { class: "diff-all" }, all, " Show the events that are the same too"),
    h(
      "table",
      { class: "events diff-table" },
      h("caption", { class: "visually-hidden" }, `Events of run A (${a.id}) and run B (${b.id})`),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "#"),
          h("th", { scope: "col" }, "A: ", h("code", {}, a.id.slice(0, 8))),
          h("th", { scope: "col" }, "#"),
          h("th", { scope: "col" }, "B: ", h("code", {}, b.id.slice(0, 8))),
          h("th", { scope: "col" }, ""),
        ),
      ),
      body,
    ),
  );
}

/**
 * The workflow graph drawn by Mermaid (bundled with the page, loaded on first use), with the
 * steps a run went through marked: done, failed, cancelled (the run failed while it executed), or running now.
 */
import type { StepSpan } from "./timeline.ts";

type Mermaid = typeof import("mermaid").default;
let mermaid: Promise<Mermaid> | undefined;
let drawn = 0;

function loadMermaid(): Promise<Mermaid> {
  mermaid ??= import("mermaid").then(({ default: m }) => {
    const dark = matchMedia("(prefers-color-scheme: dark)").matches;
    m.initialize({ startOnLoad: false, securityLevel: "strict", theme: dark ? "dark" : "neutral", flowchart: { htmlLabels: false } });
    return m;
  });
  return mermaid;
}

/** The Mermaid text of the workflow, with a class on each step that ran (ids as `toMermaid` makes them). */
export function markedGraph(text: string, spans: readonly StepSpan[]): string {
  const state = new Map<string, string>();
  for (const span of spans) {
    const id = `step_${span.step.replace(/\W/g, "_")}`;
    // The latest execution of a step says how it is shown, unless one is still running.
    if (state.get(id) !== "running") state.set(id, span.state === "finished" ? "ran" : span.state);
  }
  const lines = [
    text,
    "  classDef ran fill:#d1fae5,stroke:#059669,color:#064e3b",
    "  classDef failed fill:#fee2e2,stroke:#dc2626,color:#7f1d1d",
    "  classDef running fill:#dbeafe,stroke:#2563eb,color:#1e3a8a",
    "  classDef cancelled fill:#f3f4f6,stroke:#6b7280,color:#374151,stroke-dasharray:4 2",
  ];
  for (const [id, cls] of state) if (new RegExp(`^\\s*${id}\\[`, "m").test(text)) lines.push(`  class ${id} ${cls}`);
  return lines.join("\n");
}

/** Draws `text` into `target`, the drawing named `label` for screen readers; on a Mermaid error shows the text itself. */
export async function drawGraph(target: HTMLElement, text: string, label: string): Promise<void> {
  try {
    const { svg } = await (await loadMermaid()).render(`graph-${++drawn}`, text);
    target.innerHTML = svg; // Mermaid's own SVG, made with securityLevel "strict"
    const drawing = target.querySelector("svg");
    drawing?.setAttribute("role", "img");
    drawing?.setAttribute("aria-label", label);
  } catch (error) {
    const pre = document.createElement("pre");
    pre.textContent = `${text}\n\n(Mermaid could not draw this: ${error instanceof Error ? error.message : String(error)})`;
    target.replaceChildren(pre);
  }
}

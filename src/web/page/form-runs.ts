/**
 * Runs of a workflow that is not a chat: a form built from its input schema starts one, and
 * each run is a card in the log that shows what it is doing, asks the questions its steps put
 * to a human (an `InputRequiredEvent`, answered with a `HumanResponseEvent`), and ends with its
 * result as a folding JSON tree.
 */
import { api, followEvents } from "./api.ts";
import type { HandlerInfo, StreamedEvent, WorkflowInfo } from "./api.ts";
import { brief, byId, h } from "./dom.ts";
import { jsonView } from "./json-view.ts";
import { schemaForm } from "./schema-form.ts";

interface FormOptions {
  /** Opens the run inspector on a run. */
  readonly inspect: (handlerId: string) => void;
}

/** The form panel of index.html, and `show(workflow)` to build the form of a workflow. */
export function mountForms(options: FormOptions): { show(workflow: WorkflowInfo): void } {
  const form = byId<HTMLFormElement>("start-form");
  const log = byId<HTMLElement>("messages");
  let current: { info: WorkflowInfo; read: () => unknown } | undefined;

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!current) return;
    const input = current.read();
    if (input === undefined) return; // the browser shows which field is wrong
    log.querySelector(".empty")?.remove();
    void new RunCard(log, current.info, options.inspect).start(input);
  });

  return {
    show(info: WorkflowInfo): void {
      const built = schemaForm(info.inputSchema, `input-${info.name}`);
      current = { info, read: built.read };
      form.replaceChildren(
        h("h2", {}, `Start ${info.name}`),
        ...(info.description ? [h("p", { class: "muted" }, info.description)] : []),
        built.fields,
        h("div", { class: "actions" }, h("button", { type: "submit", id: "start-run" }, "Start run")),
      );
    },
  };
}

/** One run started from the form. */
class RunCard {
  readonly #card: HTMLElement;
  readonly #body: HTMLElement;
  readonly #status: HTMLElement;
  readonly #footer: HTMLElement;
  readonly #asked = new Set<number>();

  constructor(
    log: HTMLElement,
    private readonly info: WorkflowInfo,
    private readonly inspect: (handlerId: string) => void,
  ) {
    this.#status = h("span", { class: "status running", role: "status" }, "Starting…");
    this.#body = h("div", { class: "body" });
    this.#footer = h("div", { class: "turn-footer" }, this.#status);
    this.#card = h("div", { class: "message assistant run-card", "aria-busy": "true" }, h("span", { class: "who" }, info.name), this.#body, this.#footer);
    log.append(this.#card);
  }

  async start(input: unknown): Promise<void> {
    this.#body.append(h("p", { class: "run-input" }, h("span", { class: "muted" }, "Input: "), h("code", {}, brief(input, 300))));
    let handler: HandlerInfo;
    try {
      handler = await api.start(this.info.name, input);
    } catch (error) {
      this.#end("failed", "Not started", error instanceof Error ? error.message : String(error));
      return;
    }
    this.#setStatus("running", "Running…");
    try {
      await followEvents(handler.id, (ev) => this.#event(handler.id, ev));
      const done = await api.handler(handler.id);
      if (done.status === "succeeded") this.#body.append(h("div", { class: "result-view", "aria-label": "Result" }, jsonView(done.result)));
      const labels: Record<string, string> = { succeeded: "Done", failed: "Failed", cancelled: "Stopped", timedOut: "Timed out" };
      this.#end(done.status, labels[done.status] ?? done.status, done.error ? `${done.error.name}: ${done.error.message}` : done.notSaved, done.id);
    } catch (error) {
      this.#end("failed", "Failed", error instanceof Error ? error.message : String(error), handler.id);
    }
  }

  #setStatus(status: string, label: string): void {
    this.#status.className = `status ${status}`;
    this.#status.textContent = label;
  }

  #event(handlerId: string, ev: StreamedEvent): void {
    const role = this.info.events.find((e) => e.type === ev.type)?.role;
    if (role !== "input-required" && !/InputRequired/.test(ev.type)) return;
    if (this.#asked.has(ev.seq)) return;
    this.#asked.add(ev.seq);
    this.#body.append(this.#question(handlerId, ev));
    this.#setStatus("waiting", "Waiting for your answer");
  }

  /** A question of the run, answered with the workflow's human-response event `{ response }`. */
  #question(handlerId: string, ev: StreamedEvent): HTMLElement {
    const prefix = typeof ev.data.prefix === "string" ? ev.data.prefix : "The run asks for your answer.";
    const types = this.info.events.filter((e) => e.role === "human-response" && e.type !== "agent.ToolApprovalEvent").map((e) => e.type);
    const type = types.find((t) => t !== "HumanResponseEvent") ?? "HumanResponseEvent";
    const answer = h("input", { type: "text", class: "reason", "aria-label": "Your answer", required: true });
    const box: HTMLElement = h(
      "form",
      { class: "approval question-box", "aria-label": "The run asks" },
      h("p", { class: "question" }, prefix),
      answer,
      h("div", { class: "actions" }, h("button", { type: "submit" }, "Send answer")),
    );
    box.addEventListener("submit", (event) => {
      event.preventDefault();
      const response = answer.value.trim();
      if (!response) return;
      for (const el of box.querySelectorAll<HTMLInputElement | HTMLButtonElement>("input, button")) el.disabled = true;
      api.sendEvent(handlerId, type, { response }).then(
        () => {
          box.replaceChildren(h("p", { class: "answer", role: "status" }, `${prefix} — you answered: ${response}`));
          this.#setStatus("running", "Running…");
        },
        (error: unknown) => {
          box.append(h("p", { class: "error", role: "alert" }, error instanceof Error ? error.message : String(error)));
          for (const el of box.querySelectorAll<HTMLInputElement | HTMLButtonElement>("input, button")) el.disabled = false;
        },
      );
    });
    queueMicrotask(() => answer.focus());
    return box;
  }

  #end(status: string, label: string, error?: string, handlerId?: string): void {
    this.#card.setAttribute("aria-busy", "false");
    this.#footer.replaceChildren(
      h("span", { class: `status ${status}`, role: "status" }, label),
      ...(handlerId ? [h("button", { type: "button", class: "link", onclick: () => this.inspect(handlerId) }, "Inspect run")] : []),
    );
    if (error) this.#body.append(h("p", { class: "error", role: "alert" }, error));
    for (const el of this.#body.querySelectorAll<HTMLInputElement | HTMLButtonElement>(".question-box input, .question-box button")) el.disabled = true;
  }
}

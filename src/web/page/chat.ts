/**
 * The chat: each message starts a run of the chosen workflow with `{ input: text }`, continuing
 * the conversation of the last run that finished (the agent remembers it), and shows its events
 * as they stream in: the reply's text token by token, each tool call with its result, and
 * Approve / Deny buttons for a call that waits for a human.
 */
import { api, followEvents } from "./api.ts";
import type { HandlerInfo, StreamedEvent } from "./api.ts";
import { approvalBox } from "./approval.ts";
import type { ApprovalRequest } from "./approval.ts";
import { brief, byId, h } from "./dom.ts";
import { readable } from "./event-detail.ts";

interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

interface ChatOptions {
  /** The workflow the chat runs. */
  readonly workflow: () => string | undefined;
  /** Opens the run inspector on a run. */
  readonly inspect: (handlerId: string) => void;
}

/** Wires the chat panel of index.html. */
export function mountChat(options: ChatOptions): void {
  const log = byId<HTMLElement>("messages");
  const form = byId<HTMLFormElement>("chat-form");
  const input = byId<HTMLTextAreaElement>("chat-input");
  const sendButton = byId<HTMLButtonElement>("chat-send");
  const stopButton = byId<HTMLButtonElement>("chat-stop");
  const newButton = byId<HTMLButtonElement>("chat-new");
  const emptyLog = [...log.childNodes];
  /** The turn in progress (one at a time), with its run once started. */
  let running: { handlerId?: string } | undefined;
  /** The last run of this conversation that finished: the next one continues from it. */
  let conversation: { workflow: string; handlerId: string } | undefined;

  const setBusy = (busy: boolean) => {
    sendButton.disabled = busy;
    newButton.disabled = busy;
    stopButton.hidden = !busy;
    form.setAttribute("aria-busy", String(busy));
  };

  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  newButton.addEventListener("click", () => {
    conversation = undefined;
    log.replaceChildren(...emptyLog);
    input.focus();
  });
  stopButton.addEventListener("click", () => {
    const handlerId = running?.handlerId;
    if (handlerId) void api.cancel(handlerId).catch(() => undefined);
  });

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    const workflow = options.workflow();
    if (!text || running || !workflow) return;
    input.value = "";
    log.querySelector(".empty")?.remove();
    log.append(h("div", { class: "message user" }, h("span", { class: "who" }, "You"), h("p", {}, text)));
    const turn = new Turn(log, options.inspect);
    running = {};
    setBusy(true);
    void (async () => {
      try {
        const previous = conversation?.workflow === workflow ? conversation.handlerId : undefined;
        const handler = await api.start(workflow, { input: text }, previous);
        if (running) running.handlerId = handler.id;
        turn.started(handler);
        await followEvents(handler.id, (ev) => turn.event(ev));
        const done = await api.handler(handler.id);
        turn.finished(done);
        // A failed or stopped turn is left out: the next message continues from the last good one.
        if (done.status === "succeeded") conversation = { workflow, handlerId: done.id };
      } catch (error) {
        turn.failed(error instanceof Error ? error.message : String(error));
      } finally {
        running = undefined;
        setBusy(false);
        input.focus();
      }
    })();
  });
}

/** The assistant's side of one exchange: its text, tool calls and questions, in the order they came. */
class Turn {
  readonly #body: HTMLElement;
  readonly #footer: HTMLElement;
  readonly #cards = new Map<string, HTMLElement>();
  /** The approval boxes by approvalId. */
  readonly #questions = new Map<string, HTMLElement>();
  readonly #status: HTMLElement;
  #text: HTMLElement | undefined;
  #streamed = "";
  #handlerId = "";

  constructor(
    log: HTMLElement,
    private readonly inspect: (handlerId: string) => void,
  ) {
    this.#body = h("div", { class: "body" });
    this.#status = h("span", { class: "status running", role: "status" }, "Thinking…");
    this.#footer = h("div", { class: "turn-footer" }, this.#status);
    log.append(h("div", { class: "message assistant", "aria-busy": "true" }, h("span", { class: "who" }, "Agent"), this.#body, this.#footer));
    this.#scroll();
  }

  started(handler: HandlerInfo): void {
    this.#handlerId = handler.id;
  }

  event(ev: StreamedEvent): void {
    const data = ev.data;
    switch (ev.type) {
      case "agent.StreamEvent": {
        const delta = typeof data.delta === "string" ? data.delta : "";
        this.#streamed += delta;
        if (!this.#text) this.#body.append((this.#text = h("p", { class: "text" })));
        this.#text.textContent += delta;
        break;
      }
      case "agent.ToolCallEvent":
        this.#text = undefined;
        for (const call of (data.toolCalls as ToolCall[] | undefined) ?? []) this.#card(call);
        break;
      case "agent.FunctionOutputEvent": {
        const output = data.output as { toolCallId: string; content: string; isError?: boolean } | undefined;
        if (!output) break;
        const card = this.#cards.get(output.toolCallId);
        card?.querySelector(".result")?.replaceWith(
          // The whole result, readable: JSON as a tree that folds, other text as it is.
          h("div", { class: output.isError ? "result error" : "result" }, h("span", { class: "visually-hidden" }, "Result: "), readable(output.content, 1)),
        );
        card?.classList.add(output.isError ? "failed" : "done");
        break;
      }
      case "agent.ToolApprovalRequestEvent":
        this.#askApproval(data as unknown as ApprovalRequest);
        break;
    }
    this.#scroll();
  }

  finished(handler: HandlerInfo): void {
    const response = (handler.result as { response?: { content?: unknown } } | undefined)?.response;
    const content = typeof response?.content === "string" ? response.content : undefined;
    // A model that does not stream still answers: show the final message if nothing streamed in.
    if (content !== undefined && !this.#streamed.endsWith(content)) this.#body.append(h("p", { class: "text" }, content));
    const labels: Record<string, string> = { succeeded: "Done", failed: "Failed", cancelled: "Stopped", timedOut: "Timed out" };
    // An end the store refused is shown as the server reports it: the run is gone once this server stops.
    this.#end(handler.status, labels[handler.status] ?? handler.status, handler.error?.message ?? handler.notSaved);
  }

  failed(message: string): void {
    this.#end("failed", "Failed", message);
  }

  #end(status: string, label: string, error?: string): void {
    this.#body.parentElement?.setAttribute("aria-busy", "false");
    this.#footer.replaceChildren(
      h("span", { class: `status ${status}` }, label),
      ...(this.#handlerId ? [h("button", { type: "button", class: "link", onclick: () => this.inspect(this.#handlerId) }, "Inspect run")] : []),
    );
    if (error) this.#body.append(h("p", { class: "error", role: "alert" }, error));
    for (const button of this.#body.querySelectorAll<HTMLButtonElement>(".approval button")) button.disabled = true;
    // A call that never ran must not go on saying "running…" or "waiting for your answer…".
    const never = status === "cancelled" ? "not run: the run was stopped" : "not run";
    for (const pending of this.#body.querySelectorAll(".tool:not(.done):not(.failed) .result")) pending.replaceChildren(never);
    for (const box of this.#body.querySelectorAll(".approval:not(:has(.answer))"))
      box.replaceWith(h("p", { class: "answer muted" }, "Not answered: the run ended."));
    this.#scroll();
  }

  #card(call: ToolCall): HTMLElement {
    const card = h(
      "div",
      { class: "tool", role: "group", "aria-label": `Tool call ${call.name}` },
      h(
        "div",
        { class: "tool-head" },
        h("span", { class: "tool-icon", "aria-hidden": "true" }, "ƒ"),
        h("code", {}, call.name),
        h("code", { class: "args" }, brief(call.input)),
      ),
      h("div", { class: "result pending" }, "running…"),
    );
    this.#cards.set(call.id, card);
    this.#body.append(card);
    return card;
  }

  #askApproval(request: ApprovalRequest): void {
    // A server that restarted asks an open question again, under the same id: the box shown
    // answers it (or has). Should an answer ever be lost, the inspector shows what a run waits for.
    if (this.#questions.has(request.approvalId)) return;
    const card = this.#cards.get(request.toolCall.id) ?? this.#card(request.toolCall);
    card.querySelector(".result")?.replaceChildren("waiting for your approval…");
    const box = approvalBox(this.#handlerId, request, (approved) => {
      card.querySelector(".result")?.replaceChildren(approved ? "running…" : "not run: denied");
      if (![...this.#questions.values()].some((other) => other !== box && !other.querySelector(".answer"))) this.#setStatus("running", "Thinking…");
    });
    this.#questions.set(request.approvalId, box);
    card.append(box);
    this.#setStatus("waiting", "Waiting for your approval");
    // Deny has the focus: Enter must never approve a call that changes data (the CLI's default is No too).
    box.querySelector<HTMLButtonElement>("button.deny")?.focus();
  }

  #setStatus(status: string, label: string): void {
    this.#status.className = `status ${status}`;
    this.#status.textContent = label;
  }

  #scroll(): void {
    this.#footer.scrollIntoView({ block: "end" });
  }
}

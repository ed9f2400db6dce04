/**
 * The stepflow web page: a chat with a workflow (the function-calling agent by default), or a
 * form built from the input schema of a workflow that is not a chat, and a run inspector, on the server's HTTP API. Two tabs; the URL's hash says which, and which run
 * (`#runs/<id>`), so a run's page can be linked to.
 */
import { api, onTokenNeeded } from "./api.ts";
import type { WorkflowInfo } from "./api.ts";
import { mountChat } from "./chat.ts";
import { byId, h } from "./dom.ts";
import { mountForms } from "./form-runs.ts";
import { mountInspector } from "./inspector.ts";
import { isChatWorkflow } from "./schema-form.ts";

let workflows: WorkflowInfo[] = [];
const picker = byId<HTMLSelectElement>("workflow");
const tabs = [...document.querySelectorAll<HTMLButtonElement>("[role=tab]")];

const inspector = mountInspector(() => workflows);
const inspect = (id: string) => (location.hash = `#runs/${encodeURIComponent(id)}`);
mountChat({ workflow: () => picker.value || undefined, inspect });
const forms = mountForms({ inspect });

/** A chat for a workflow whose input is one text (the agent's shape), a form from its input schema for any other. */
function showInput(): void {
  const info = workflows.find((w) => w.name === picker.value);
  const chat = info !== undefined && isChatWorkflow(info);
  byId("chat-form").hidden = !chat;
  byId("start-form").hidden = chat || info === undefined;
  const empty = document.querySelector<HTMLElement>("#messages .empty");
  if (empty) empty.hidden = !chat;
  if (info && !chat) forms.show(info);
}
picker.addEventListener("change", showInput);

onTokenNeeded(() => {
  const dialog = byId<HTMLDialogElement>("token-dialog");
  const input = byId<HTMLInputElement>("token-input");
  input.value = "";
  dialog.showModal();
  return new Promise((resolve) =>
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok" ? input.value.trim() || undefined : undefined), { once: true }),
  );
});

function select(tab: "chat" | "runs"): void {
  for (const button of tabs) {
    const on = button.dataset.tab === tab;
    button.setAttribute("aria-selected", String(on));
    button.tabIndex = on ? 0 : -1;
    byId(button.getAttribute("aria-controls") ?? "").hidden = !on;
  }
}

function route(): void {
  const [tab, id] = location.hash.replace(/^#/, "").split("/");
  if (tab === "runs") {
    select("runs");
    void inspector.open(id ? decodeURIComponent(id) : undefined);
  } else select("chat");
}

for (const button of tabs) {
  button.addEventListener("click", () => (location.hash = button.dataset.tab === "runs" ? "#runs" : "#chat"));
  // Arrow keys move between tabs, as the ARIA tabs pattern has it.
  button.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    const next = tabs[(tabs.indexOf(button) + (event.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
    next?.focus();
    next?.click();
  });
}
window.addEventListener("hashchange", route);

async function loadWorkflows(): Promise<void> {
  const status = byId("server-status");
  try {
    workflows = await api.workflows();
    picker.replaceChildren(...workflows.map((w) => h("option", { value: w.name, title: w.description }, w.name)));
    const agent = workflows.find((w) => w.name === "agent") ?? workflows[0];
    if (agent) picker.value = agent.name;
    showInput();
    status.textContent = workflows.length === 0 ? "The server has no workflows registered." : "";
  } catch (error) {
    status.textContent = `Cannot reach the server's API: ${error instanceof Error ? error.message : String(error)}`;
  }
}

void loadWorkflows().then(route);

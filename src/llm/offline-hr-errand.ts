/**
 * The offline demo model's one errand on a REST API: "Fire Lawson" against an HR API that
 * lists employees at GET /api/users?page=N (reqres.in's shape: `{ page, total_pages, data: [{ id,
 * first_name, last_name }] }`) and removes one at DELETE /api/users/{id}, through the
 * `call_rest_api` tool. It reads every page of employees, and when exactly one matches the
 * name, asks for the DELETE (which an app usually makes wait for a human's approval), and reports what the API
 * answered, or what stopped it. Like the arithmetic, every step is read back from the history.
 */
import type { ChatMessage, ToolCall } from "@llamaindex/core/llms";
import { extractText } from "@llamaindex/core/utils";
import { toolCallsOf, toolResultIdOf } from "./chat-history.ts";

/** The tool the errand goes through: `restApiTool`'s default name. */
export const REST_TOOL = "call_rest_api";

/** What the model decided: text, or the next request. */
export type ErrandReply = { readonly text: string; readonly toolCalls?: undefined } | { readonly text?: undefined; readonly toolCalls: ToolCall[] };

interface Employee {
  readonly id: number | string;
  readonly name: string;
}

/**
 * The name in "Fire Lawson", "please fire Michael Lawson."; undefined if the message does not start so.
 * @example firedName("Fire Lawson"); // "Lawson"
 */
export function firedName(text: string): string | undefined {
  const match = /^\s*(?:please\s+|(?:can|could|would) you\s+)?fire\s+([\p{L}][\p{L}'-]*(?:\s+[\p{L}][\p{L}'-]*)?)/iu.exec(text);
  const name = match?.[1]?.replace(/\s+(?:please|now|today)$/i, "");
  return name || undefined;
}

/**
 * The next move of the errand for `name`, from this turn's messages (those after the question).
 * @example
 * fireReply("Lawson", [], ["call_rest_api"], 1); // { toolCalls: [{ id: "call_1_0", name: "call_rest_api", input: { method: "GET", path: "/api/users?page=1" } }] }
 */
export function fireReply(name: string, turn: readonly ChatMessage[], tools: readonly string[], historyLength: number): ErrandReply {
  if (!tools.includes(REST_TOOL)) {
    return { text: `To fire ${name} I need the ${REST_TOOL} tool on the HR API, and it is not available.` };
  }
  const request = (method: "GET" | "DELETE", path: string): ErrandReply => ({
    toolCalls: [{ id: `call_${historyLength}_0`, name: REST_TOOL, input: { method, path } }],
  });
  const results = new Map(turn.flatMap((m) => (toolResultIdOf(m) === undefined ? [] : [[toolResultIdOf(m) as string, m] as const])));
  const calls = turn.flatMap((m) => toolCallsOf(m)).filter((call) => call.name === REST_TOOL);
  const last = calls.at(-1);
  if (!last) return request("GET", "/api/users?page=1");
  const answer = results.get(last.id);
  if (!answer) return { text: `I asked the HR API for ${describeRequest(last)} and got no answer.` };
  const text = extractText(answer.content);
  const isError = (answer.options as { toolResult?: { isError?: boolean } } | undefined)?.toolResult?.isError === true;
  const input = last.input as { method?: string; path?: string };
  const seen = calls.flatMap((call) => employeesIn(results.get(call.id)));
  if (input.method === "DELETE") {
    const id = /\/(\d+)$/.exec(input.path ?? "")?.[1];
    const who = seen.find((employee) => String(employee.id) === id);
    const label = who ? `${who.name} (id ${who.id})` : `employee ${id ?? "?"}`;
    if (isError) return { text: `I did not fire ${label}. ${text.replace(/^Encountered error in tool call: /, "")}` };
    const status = readResponse(text)?.status;
    if (status !== undefined && status >= 200 && status < 300) return { text: `${label} has been removed from the HR system.` };
    return { text: `The HR API refused to remove ${label}: it answered ${describeResponse(text)}.` };
  }
  if (isError) return { text: `I could not read the employee list: ${text.replace(/^Encountered error in tool call: /, "")}` };
  const response = readResponse(text);
  const page = response?.body as { page?: unknown; total_pages?: unknown; data?: unknown } | undefined;
  if (response?.status !== 200 || !page || !Array.isArray(page.data)) {
    return { text: `I could not read the employee list: the HR API answered ${describeRequest(last)} with ${describeResponse(text)}.` };
  }
  // Every page is read before anyone is fired: a name on this page may be on a later one too.
  const current = Number(page.page ?? /page=(\d+)/.exec(input.path ?? "")?.[1] ?? 1);
  if (Number.isInteger(current) && typeof page.total_pages === "number" && current < page.total_pages) return request("GET", `/api/users?page=${current + 1}`);
  const matches = seen.filter((employee) => sameName(employee.name, name));
  if (matches.length > 1) {
    return { text: `Several employees match "${name}": ${matches.map((e) => `${e.name} (id ${e.id})`).join(", ")}. Whom do you mean? Give the full name.` };
  }
  const [found] = matches;
  if (found) return request("DELETE", `/api/users/${found.id}`);
  return { text: `I found no employee named ${name} among the ${seen.length} employees the HR API lists, so I fired no one.` };
}

/** The employees listed in a tool result message (reqres.in's first_name/last_name, or a `name`). */
function employeesIn(message: ChatMessage | undefined): Employee[] {
  if (!message) return [];
  const data = (readResponse(extractText(message.content))?.body as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(data)) return [];
  return data.flatMap((item: unknown) => {
    const { id, name, first_name: first, last_name: last } = (item ?? {}) as Record<string, unknown>;
    const full = typeof name === "string" ? name : [first, last].filter((part) => typeof part === "string").join(" ");
    return (typeof id === "number" || typeof id === "string") && full ? [{ id, name: full }] : [];
  });
}

/** Whether every word the user gave is a word of the employee's name ("lawson", "Michael Lawson"). */
function sameName(employee: string, asked: string): boolean {
  const words = new Set(employee.toLowerCase().split(/\s+/));
  return asked
    .toLowerCase()
    .split(/\s+/)
    .every((word) => words.has(word));
}

function readResponse(text: string): { status: number; body: unknown } | undefined {
  try {
    const parsed = JSON.parse(text) as { status?: unknown; body?: unknown };
    return typeof parsed.status === "number" ? { status: parsed.status, body: parsed.body } : undefined;
  } catch {
    return undefined;
  }
}

function describeRequest(call: ToolCall): string {
  const { method, path } = call.input as { method?: string; path?: string };
  return `${method ?? "?"} ${path ?? "?"}`;
}

function describeResponse(text: string): string {
  const response = readResponse(text);
  const shown = response ? `${response.status} ${JSON.stringify(response.body) ?? ""}` : text;
  return shown.length > 200 ? `${shown.slice(0, 200)}…` : shown;
}

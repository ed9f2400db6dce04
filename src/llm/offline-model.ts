/**
 * The offline demo model: a deterministic `ToolCallLLM` with no network, so that `npm start`,
 * the notebooks and the tests show the agent, the engine and sessions working anywhere. It is
 * not a language model. It plans arithmetic into calls of the calculator tools (independent
 * operations in parallel), reads the tool results back from the chat history, remembers a name
 * the user gave in the conversation (from the history, not hidden state), and says what it
 * can do otherwise. Replies stream word by word.
 */
import type { JSONObject } from "@llamaindex/core/global";
import type { ChatMessage, ToolCall } from "@llamaindex/core/llms";
import { extractText } from "@llamaindex/core/utils";
import { toolCallsOf, toolResultIdOf } from "./chat-history.ts";
import { LocalLLM } from "./local-llm.ts";
import type { LocalReply } from "./local-llm.ts";

type Op = "+" | "-" | "*" | "/";
/** `text` is the number as the user wrote it ("1e5", "0.50"), which is how it is shown back. */
type Expr = { kind: "num"; value: number; text: string } | { kind: "op"; op: Op; left: Expr; right: Expr };

/** What the model decided for one request. */
export type OfflineReply = { readonly text: string; readonly toolCalls?: undefined } | { readonly text?: undefined; readonly toolCalls: ToolCall[] };

const TOOL_OF: Record<Op, string> = { "+": "add", "-": "subtract", "*": "multiply", "/": "divide" };
const PRECEDENCE: Record<Op, number> = { "+": 1, "-": 1, "*": 2, "/": 2 };
const HELP =
  'I\'m the offline demo model, not a language model: I can do arithmetic with the calculator tools (try "What is (2123 + 2321) * 312?") and remember your name (and, given a REST API tool, fire an employee: "Fire Lawson"). For real answers, set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server such as Ollama.';

/**
 * @example
 * const agent = new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools });
 * (await agent.run({ input: "What is (2123 + 2321) * 312?" })).response.content; // "(2123 + 2321) * 312 = 1386528"
 */
export class OfflineDemoLLM extends LocalLLM {
  constructor() {
    super("offline-demo");
  }

  protected async reply(messages: ChatMessage[], tools: string[]): Promise<LocalReply> {
    const reply = offlineReply(messages, tools);
    return reply.toolCalls ? { deltas: [], toolCalls: reply.toolCalls } : { deltas: reply.text.split(/(?<= )/), toolCalls: [] };
  }
}

/**
 * The model's decision for a chat history and the tools on offer (pure, for tests). A message
 * holding several questions ("What is 2 + 3? And 4 * 5?") gets an answer to each, one a line:
 * the tool calls of all of them go out together, and the answer waits for every result.
 * @example offlineReply([{ role: "user", content: "2 * 3?" }], ["multiply"]); // { toolCalls: [{ id: "call_1_0", name: "multiply", input: { x: 2, y: 3 } }] }
 */
export function offlineReply(messages: readonly ChatMessage[], tools: readonly string[]): OfflineReply {
  const questionIndex = messages.findLastIndex((m) => m.role === "user" && toolResultIdOf(m) === undefined);
  const question = questionIndex >= 0 ? extractText((messages[questionIndex] as ChatMessage).content) : "";
  const earlier = messages
    .slice(0, Math.max(0, questionIndex))
    .filter((m) => m.role === "user" && toolResultIdOf(m) === undefined)
    .map((m) => extractText(m.content));
  const turn: Turn = { messages: messages.slice(questionIndex + 1), tools, calls: [], historyLength: messages.length };
  const parts = splitQuestions(question);
  if (parts.length <= 1) {
    const reply = answer(question, earlier, turn);
    return reply.kind === "calls" ? { toolCalls: turn.calls } : { text: reply.kind === "unknown" ? HELP : reply.text };
  }
  const lines: string[] = [];
  const greetings: string[] = [];
  const unknown: string[] = [];
  let waiting = false;
  parts.forEach((part, i) => {
    const reply = answer(part, [...earlier, ...parts.slice(0, i)], turn);
    if (reply.kind === "calls") waiting = true;
    else if (reply.kind === "text") lines.push(reply.text);
    else if (reply.kind === "greeting")
      greetings.push(reply.text); // "Hello! 2 + 2?" needs no introduction before the answer
    // "Thanks!" needs no answer; a question the model cannot answer is named, so none goes unanswered silently.
    else if (/\?\s*$/.test(part)) unknown.push(part.trim());
  });
  if (waiting) return { toolCalls: turn.calls };
  if (lines.length === 0) return { text: greetings[0] ?? HELP };
  for (const part of unknown)
    lines.push(`I can't answer "${part}": I'm the offline demo model (arithmetic, your name${hrAccess(turn.tools) ? ", firing an employee" : ""}).`);
  return { text: lines.join("\n") };
}

/** What one reply is being planned from: the current turn's messages, the tools, and the calls planned so far (shared by the questions of a message). */
interface Turn {
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly string[];
  readonly calls: ToolCall[];
  readonly historyLength: number;
}

/** One question's answer: text, tool calls pending (added to `turn.calls`), or none the model has. */
type Answer = { readonly kind: "text" | "greeting"; readonly text: string } | { readonly kind: "calls" } | { readonly kind: "unknown" };

function answer(question: string, earlier: readonly string[], turn: Turn): Answer {
  const expr = findExpression(question);
  if (expr === "unreadable") return { kind: "unknown" };
  if (expr) {
    const before = turn.calls.length;
    const reply = arithmetic(expr, turn.messages, turn.tools, turn.historyLength, turn.calls);
    return reply.text !== undefined ? text(reply.text) : turn.calls.length > before || reply.toolCalls.length > 0 ? { kind: "calls" } : { kind: "unknown" };
  }
  const access = hrAccess(turn.tools);
  const target = access ? firingTarget(question) : undefined;
  if (access && target) return fireEmployee(target, access, turn);
  const name = statedName(question);
  if (name) return text(`Nice to meet you, ${name}!`);
  if (/\b(what(?:'s| is) my name|who am i)\b/i.test(question)) {
    const known = earlier.map(statedName).findLast((n) => n !== undefined);
    return text(known ? `Your name is ${known}.` : "You haven't told me your name yet.");
  }
  if (/^\s*(hello|hi|hey|good (morning|afternoon|evening))\b/i.test(question)) {
    return greeting(
      'Hello! I\'m the offline demo model. I can do arithmetic with the calculator tools and remember your name. Try "What is (2123 + 2321) * 312?"',
    );
  }
  return { kind: "unknown" };
}

/**
 * A message cut into its questions: at "?" and "!", at a sentence's "." (not a decimal point),
 * at line breaks, and at ", and what…" / "and who…"; a message of one question stays whole.
 */
function splitQuestions(text: string): string[] {
  return text
    .split(/(?<=[?!.])\s+|\n+|[,;]?\s+and\s+(?=(?:what|what's|who|how|fire|also)\b)/i)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

/** Plans the next tool calls for `expr`, or answers once the tool results give its value. */
function arithmetic(expr: Expr, turn: readonly ChatMessage[], tools: readonly string[], historyLength: number, ready: ToolCall[] = []): OfflineReply {
  // What the tools already answered this turn, by operation and operands.
  const results = new Map<string, { value: number } | { error: string }>();
  const calls = new Map(turn.flatMap((m) => toolCallsOf(m)).map((c) => [c.id, c]));
  for (const message of turn) {
    const id = toolResultIdOf(message);
    const call = id === undefined ? undefined : calls.get(id);
    if (!call) continue;
    const input = call.input as { x?: unknown; y?: unknown };
    const text = extractText(message.content);
    const error = (message.options as { toolResult?: { isError?: boolean } }).toolResult?.isError;
    const value = parseResult(text);
    results.set(
      key(call.name, Number(input.x), Number(input.y)),
      error || value === undefined ? { error: text.replace(/^Encountered error in tool call: /, "") } : { value },
    );
  }
  // Past 2^53 not every whole number exists as a JavaScript number: say "≈", not "=".
  let approximate = false;
  const note = (value: number) => (approximate ||= Number.isInteger(value) && !Number.isSafeInteger(value));
  // How far each value may be from the exact decimal answer (first-order error propagation
  // through the operations), so that formatNumber can tell noise from digits.
  const errorOf = new Map<Expr, number>();
  const evaluate = (node: Expr): number | { error: string } | undefined => {
    if (node.kind === "num") {
      note(node.value);
      errorOf.set(node, Number.isSafeInteger(node.value) ? 0 : ulp(node.value) / 2);
      return node.value;
    }
    const left = evaluate(node.left);
    const right = evaluate(node.right);
    if (typeof left === "object") return left;
    if (typeof right === "object") return right;
    if (left === undefined || right === undefined) return undefined;
    const name = TOOL_OF[node.op];
    const known = results.get(key(name, left, right));
    if (known && "error" in known) return { error: `${format(node)} failed: ${known.error}` };
    if (known) {
      // The calculator's numbers overflow to ±Infinity (and Infinity - Infinity is NaN): no tool can go on from there.
      if (Number.isNaN(known.value)) return { error: `${format(node)} has no numeric result (the calculator returned NaN).` };
      if (!Number.isFinite(known.value)) return { error: `${format(node)} is too large for the calculator: the result overflows to ${known.value}.` };
      note(known.value);
      errorOf.set(node, propagatedError(node.op, left, right, errorOf.get(node.left) ?? 0, errorOf.get(node.right) ?? 0, known.value));
      return known.value;
    }
    if (!tools.includes(name)) return { error: `I need the ${name} tool for ${format(node)}, and it is not available.` };
    if (!ready.some((c) => c.name === name && key(c.name, (c.input as { x: number }).x, (c.input as { y: number }).y) === key(name, left, right))) {
      ready.push({ id: `call_${historyLength}_${ready.length}`, name, input: { x: left, y: right } });
    }
    return undefined;
  };
  const value = evaluate(expr);
  if (typeof value === "number") return { text: `${format(expr)} ${approximate ? "≈" : "="} ${formatNumber(value, errorOf.get(expr) ?? 0)}` };
  if (typeof value === "object") return { text: value.error };
  return { toolCalls: ready };
}

const key = (name: string, x: number, y: number) => `${name}(${x},${y})`;

/** A tool result's text as a number ("Infinity" and "NaN" included); undefined if it is not one. */
function parseResult(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === "NaN") return Number.NaN;
  const value = Number(trimmed);
  return trimmed === "" || Number.isNaN(value) ? undefined : value;
}

/** The gap between `value` and the next double: the unit of floating-point rounding there. */
function ulp(value: number): number {
  return value === 0 ? Number.MIN_VALUE : Number.EPSILON * 2 ** Math.floor(Math.log2(Math.abs(value)));
}

/** The error bound of `result` = left op right, from its operands' bounds plus its own rounding. */
function propagatedError(op: Op, left: number, right: number, leftError: number, rightError: number, result: number): number {
  const own = ulp(result) / 2;
  if (op === "+" || op === "-") return leftError + rightError + own;
  if (op === "*") return Math.abs(left) * rightError + Math.abs(right) * leftError + own;
  return (leftError + Math.abs(result) * rightError) / Math.abs(right) + own;
}

/**
 * A result as JavaScript has it, without floating-point noise: 0.1 + 0.2 reads 0.3, not
 * 0.30000000000000004, and 3 - 2.9 reads 0.1. A fraction is shown as the shortest decimal
 * within twice its error bound (`error`), so digits that the inputs determine are all shown
 * (1 / 3 = 0.3333333333333333); a whole number is never changed.
 */
function formatNumber(value: number, error: number): string {
  if (Number.isInteger(value) || !Number.isFinite(value)) return String(value);
  for (let digits = 1; digits < 17; digits++) {
    const shorter = Number(value.toPrecision(digits));
    if (Math.abs(shorter - value) <= 2 * error) return String(shorter);
  }
  return String(value);
}

/** The expression as text, with parentheses only where precedence needs them. */
function format(node: Expr, parent?: Op, right = false): string {
  if (node.kind === "num") return node.text;
  const text = `${format(node.left, node.op)} ${node.op} ${format(node.right, node.op, true)}`;
  if (!parent) return text;
  const needs = PRECEDENCE[node.op] < PRECEDENCE[parent] || (right && PRECEDENCE[node.op] === PRECEDENCE[parent] && (parent === "-" || parent === "/"));
  return needs ? `(${text})` : text;
}

// A number as the model reads it: 12, 1.5, .5, 1e5, 2.5E-3.
const NUMBER = String.raw`(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?`;
// Notation it cannot read: powers, percent/modulo, roots, and words for them. Met anywhere in a
// message with arithmetic, the answer is the help text: a refusal costs one reply, while reading
// around the notation ("2^3 + 1" as "3 + 1") gives a confident wrong answer.
const UNSUPPORTED = /[\^%√²³]|\*\*|\b(?:mod|modulo|power|squared|cubed|sqrt|square root|percent|factorial|log|ln|sin|cos|tan|exp)\b/i;

/**
 * The arithmetic in a message ("plus", "times", "divided by" … included), if there is any;
 * "unreadable" if the arithmetic holds notation the model cannot read.
 */
function findExpression(text: string): Expr | "unreadable" | undefined {
  const normalized = text
    .replace(/\bmultiplied by\b|\btimes\b|×/gi, " * ")
    .replace(/\bdivided by\b|÷/gi, " / ")
    .replace(/\bplus\b/gi, " + ")
    .replace(/\bminus\b|\u2212/gi, " - "); // U+2212 MINUS SIGN, what word processors and phones type
  const candidates = [...normalized.matchAll(new RegExp(String.raw`(?:${NUMBER}|[-+*/().\s])+`, "g"))]
    .map((m) => trimCandidate(m[0], m.index))
    .filter((c) => /\d\s*\)?\s*[-+*/]\s*\(?\s*-?\.?\d/.test(c.text));
  if (candidates.length > 0 && (UNSUPPORTED.test(normalized) || candidates.some((c) => glued(normalized, c.start, c.end)))) return "unreadable";
  for (const candidate of candidates.sort((a, b) => b.text.length - a.text.length)) {
    const parsed = parse(candidate.text);
    if (parsed) return parsed;
  }
  return undefined;
}

/** A candidate without its surrounding spaces and a sentence's final "." ("What is 2 + 2."). */
function trimCandidate(text: string, index: number): { text: string; start: number; end: number } {
  const trimmed = text.trimStart();
  const start = index + text.length - trimmed.length;
  const core = trimmed.replace(/[\s.]+$/, "");
  return { text: core, start, end: start + core.length };
}

/**
 * Whether the arithmetic at `start`–`end` touches characters it cannot be read without: a
 * letter, digit or symbol right against it ("1,000 + 2,000", "5x + 1", "$5 + 1").
 * Sentence punctuation after it is fine ("2 + 2?", "2 + 2, please", "2+2=?"), a quote or space around it too.
 */
function glued(text: string, start: number, end: number): boolean {
  const before = text[start - 1];
  const after = text[end];
  const next = text[end + 1];
  if (before !== undefined && !/[\s"'“‘]/.test(before)) return true;
  if (after === undefined || /[\s?!;"'”’]/.test(after) || /^=\s*\??\s*$/.test(text.slice(end))) return false;
  // "2 + 2, please" and "2 + 2. Thanks" end a phrase; "1,000" and "2.5.1" do not.
  return !(/[.,:]/.test(after) && (next === undefined || /\s/.test(next)));
}

/** A recursive-descent parser for + - * / and parentheses; undefined if `text` is not exactly one expression. */
function parse(text: string): Expr | undefined {
  // Every character must be a token or a space: nothing is skipped silently.
  if (!new RegExp(String.raw`^(?:\s|${NUMBER}|[-+*/()])*$`).test(text)) return undefined;
  const tokens = text.match(new RegExp(String.raw`${NUMBER}|[-+*/()]`, "g")) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const binary = (next: () => Expr | undefined, ops: string[]) => (): Expr | undefined => {
    let left = next();
    while (left && ops.includes(peek() ?? "")) {
      const op = tokens[at++] as Op;
      const right = next();
      if (!right) return undefined;
      left = { kind: "op", op, left, right };
    }
    return left;
  };
  const atom = (): Expr | undefined => {
    const token = tokens[at++];
    if (token === "(") {
      const inner = sum();
      return tokens[at++] === ")" ? inner : undefined;
    }
    if (token === "-") {
      const inner = atom();
      return inner?.kind === "num"
        ? { kind: "num", value: -inner.value, text: inner.text.startsWith("-") ? inner.text.slice(1) : `-${inner.text}` }
        : undefined;
    }
    return token !== undefined && /^[\d.]/.test(token) ? { kind: "num", value: Number(token), text: token } : undefined;
  };
  const product = binary(atom, ["*", "/"]);
  const sum = binary(product, ["+", "-"]);
  const expr = sum();
  return expr && at === tokens.length && expr.kind === "op" ? expr : undefined;
}

/** "My name is Logan", "I'm Logan", "call me Logan" → "Logan". */
function statedName(text: string): string | undefined {
  const match =
    /\b(?:[Mm]y name is|[Mm]y name's|I am|I'm|[Cc]all me)\s+([A-Z][\p{L}'-]*(?:\s+[A-Z][\p{L}'-]*)?)/u.exec(text) ?? /\bmy name is\s+([\p{L}'-]+)/iu.exec(text);
  const name = match?.[1];
  return name ? name[0]?.toUpperCase() + name.slice(1) : undefined;
}

/**
 * How the model reaches the HR API: a tool that sends any request (`restApiTool`'s default
 * name, or one ending like it), or the API's operations as tools (`openApiTools`: listing the
 * users and deleting one).
 */
type HrAccess = { readonly kind: "request"; readonly tool: string } | { readonly kind: "operations"; readonly list: string; readonly remove: string };

function hrAccess(tools: readonly string[]): HrAccess | undefined {
  const tool = tools.find((name) => /(?:^|_)rest_api$/.test(name));
  if (tool) return { kind: "request", tool };
  const list = tools.find((name) => /^get_(?:\w+_)?users$/.test(name));
  const remove = tools.find((name) => /^delete_(?:\w+_)?users_id$/.test(name));
  return list && remove ? { kind: "operations", list, remove } : undefined;
}

/** A request of the HR API as a call of `access`'s tools. */
function callFor(access: HrAccess, request: { method: string; path: string }): { name: string; input: JSONObject } {
  if (access.kind === "request") return { name: access.tool, input: request };
  const page = /^\/api\/users\?page=(\d+)$/.exec(request.path);
  if (request.method === "GET" && page) return { name: access.list, input: { page: Number(page[1]) } };
  return { name: access.remove, input: { id: Number(request.path.split("/").at(-1)) } };
}

/** The HR API request a call of `access`'s tools makes, or `undefined` for another tool's call. */
function requestOf(access: HrAccess, call: ToolCall): { method: string; path: string } | undefined {
  const input = (call.input ?? {}) as { method?: unknown; path?: unknown; page?: unknown; id?: unknown };
  if (access.kind === "request") return call.name === access.tool ? { method: String(input.method), path: String(input.path) } : undefined;
  if (call.name === access.list) return { method: "GET", path: `/api/users?page=${String(input.page ?? 1)}` };
  if (call.name === access.remove) return { method: "DELETE", path: `/api/users/${String(input.id)}` };
  return undefined;
}

/** "Fire Lawson", "please remove Michael Lawson", "let Lawson go" → "Lawson" / "Michael Lawson". */
function firingTarget(text: string): string | undefined {
  const word = String.raw`[\p{L}][\p{L}'-]*`;
  const name = String.raw`(${word}(?:\s+\p{Lu}[\p{L}'-]*)?)`;
  const match =
    new RegExp(String.raw`\b(?:[Ff]ire|[Dd]ismiss|[Ss]ack|[Tt]erminate|[Rr]emove|[Dd]elete)\s+(?:the\s+employee\s+|employee\s+)?${name}`, "u").exec(text) ??
    new RegExp(String.raw`\b[Ll]et\s+${name}\s+go\b`, "u").exec(text);
  const target = match?.[1];
  // "remove my account", "delete it": not someone's name.
  return target && !NOT_NAMES.has(target.split(/\s/)[0]?.toLowerCase() ?? "") ? target : undefined;
}
const NOT_NAMES = new Set([
  "my",
  "me",
  "the",
  "a",
  "an",
  "all",
  "everyone",
  "everybody",
  "it",
  "this",
  "that",
  "them",
  "him",
  "her",
  "someone",
  "somebody",
  "us",
  "you",
]);

/** An employee of the HR API's shape, as its list answers hold them. */
interface Employee {
  readonly id: number;
  readonly first_name: string;
  readonly last_name: string;
}

/**
 * Fires `target` through the REST tool, the way the HR API works: list the employees a page at
 * a time until one matches, then DELETE /api/users/{id} (which the app should have a human
 * approve), then say what happened, a refusal included.
 */
function fireEmployee(target: string, access: HrAccess, turn: Turn): Answer {
  const results = restResults(turn.messages, access);
  const wanted = target.toLowerCase().split(/\s+/);
  const matches = (e: Employee) => {
    const full = [e.first_name, e.last_name].map((n) => String(n).toLowerCase());
    return wanted.every((w) => full.includes(w));
  };
  const found = new Map<number, Employee>();
  let lastPage = 0;
  let pages = 1;
  for (const { call, result } of results) {
    if (call.method !== "GET" || !call.path.startsWith("/api/users?page=")) continue;
    if (result.isError || result.status !== 200) return text(`I could not list the employees: ${result.content}`);
    const body = result.body as { data?: Employee[]; total_pages?: number; page?: number } | undefined;
    for (const e of body?.data ?? []) if (matches(e)) found.set(e.id, e);
    lastPage = Math.max(lastPage, Number(body?.page) || 0);
    pages = Number(body?.total_pages) || pages;
  }
  const list = (page: number): Answer => plan(turn, access, { method: "GET", path: `/api/users?page=${page}` });
  // Every page is read first: a name may fit someone on a later page too.
  if (lastPage < pages) return list(lastPage + 1);
  if (found.size === 0) return text(`I found no employee named ${target}.`);
  if (found.size > 1) {
    const who = [...found.values()].map((e) => `${e.first_name} ${e.last_name} (id ${e.id})`).join(", ");
    return text(`${found.size} employees match "${target}": ${who}. Which one should I fire? Give the full name.`);
  }
  const employee = [...found.values()][0] as Employee;
  const fullName = `${employee.first_name} ${employee.last_name}`;
  const deletion = results.find(({ call }) => call.method === "DELETE" && call.path === `/api/users/${employee.id}`);
  if (!deletion) return plan(turn, access, { method: "DELETE", path: `/api/users/${employee.id}` });
  const { result } = deletion;
  if (result.isError) return text(`I did not fire ${fullName}: ${result.content}`);
  if (result.status !== undefined && result.status >= 200 && result.status < 300) return text(`Done: ${fullName} (id ${employee.id}) has been removed.`);
  return text(`The API refused to remove ${fullName}: it answered ${String(result.status)} ${JSON.stringify(result.body ?? null)}.`);
}

function text(value: string): Answer {
  return { kind: "text", text: value };
}

function greeting(value: string): Answer {
  return { kind: "greeting", text: value };
}

/** Adds the call that makes `request` to the turn's plan (once), and says the answer waits for it. */
function plan(turn: Turn, access: HrAccess, request: { method: string; path: string }): Answer {
  const { name, input } = callFor(access, request);
  if (!turn.calls.some((c) => c.name === name && JSON.stringify(c.input) === JSON.stringify(input))) {
    turn.calls.push({ id: `call_${turn.historyLength}_${turn.calls.length}`, name, input });
  }
  return { kind: "calls" };
}

/** The HR API's requests this turn, each with its result: HTTP status and body, or the error text (a call refused by a human, say). */
function restResults(
  turn: readonly ChatMessage[],
  access: HrAccess,
): { call: { method: string; path: string }; result: { isError: boolean; content: string; status?: number; body?: unknown } }[] {
  const requests = new Map<string, { method: string; path: string }>();
  for (const call of turn.flatMap((m) => toolCallsOf(m))) {
    const request = requestOf(access, call);
    if (request) requests.set(call.id, request);
  }
  const out: ReturnType<typeof restResults> = [];
  for (const message of turn) {
    const id = toolResultIdOf(message);
    const request = id === undefined ? undefined : requests.get(id);
    if (!request) continue;
    const content = extractText(message.content);
    const isError = (message.options as { toolResult?: { isError?: boolean } }).toolResult?.isError === true;
    let parsed: { status?: unknown; body?: unknown } = {};
    try {
      parsed = JSON.parse(content) as typeof parsed;
    } catch {
      // an error text, not the tool's JSON
    }
    out.push({ call: request, result: { isError, content, ...(typeof parsed.status === "number" ? { status: parsed.status, body: parsed.body } : {}) } });
  }
  return out;
}

/**
 * The offline demo model: a deterministic `ToolCallLLM` with no network, so that `npm start`,
 * the notebooks and the tests show the agent, the engine and sessions working anywhere. It is
 * not a language model. It plans arithmetic into calls of the calculator tools (independent
 * operations in parallel), reads the tool results back from the chat history, remembers a name
 * the user gave in the conversation (from the history, not hidden state), and says what it
 * can do otherwise. Replies stream word by word.
 */
import type { ChatMessage, ToolCall } from "@llamaindex/core/llms";
import { extractText } from "@llamaindex/core/utils";
import { toolCallsOf, toolResultIdOf } from "./chat-history.ts";
import { LocalLLM } from "./local-llm.ts";
import type { LocalReply } from "./local-llm.ts";

type Op = "+" | "-" | "*" | "/";
type Expr = { kind: "num"; value: number } | { kind: "op"; op: Op; left: Expr; right: Expr };

/** What the model decided for one request. */
export type OfflineReply = { readonly text: string; readonly toolCalls?: undefined } | { readonly text?: undefined; readonly toolCalls: ToolCall[] };

const TOOL_OF: Record<Op, string> = { "+": "add", "-": "subtract", "*": "multiply", "/": "divide" };
const PRECEDENCE: Record<Op, number> = { "+": 1, "-": 1, "*": 2, "/": 2 };
const HELP =
  'I\'m the offline demo model, not a language model: I can do arithmetic with the calculator tools (try "What is (2123 + 2321) * 312?") and remember your name. For real answers, set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server such as Ollama.';

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
 * The model's decision for a chat history and the tools on offer (pure, for tests).
 * @example offlineReply([{ role: "user", content: "2 * 3?" }], ["multiply"]); // { toolCalls: [{ id: "call_1_0", name: "multiply", input: { x: 2, y: 3 } }] }
 */
export function offlineReply(messages: readonly ChatMessage[], tools: readonly string[]): OfflineReply {
  const questionIndex = messages.findLastIndex((m) => m.role === "user" && toolResultIdOf(m) === undefined);
  const question = questionIndex >= 0 ? extractText((messages[questionIndex] as ChatMessage).content) : "";
  const expr = findExpression(question);
  if (expr) return arithmetic(expr, messages.slice(questionIndex + 1), tools, messages.length);
  const name = statedName(question);
  if (name) return { text: `Nice to meet you, ${name}!` };
  if (/\b(what(?:'s| is) my name|who am i)\b/i.test(question)) {
    const earlier = messages.slice(0, questionIndex).filter((m) => m.role === "user").map((m) => statedName(extractText(m.content)));
    const known = earlier.findLast((n) => n !== undefined);
    return { text: known ? `Your name is ${known}.` : "You haven't told me your name yet." };
  }
  if (/^\s*(hello|hi|hey|good (morning|afternoon|evening))\b/i.test(question)) {
    return { text: 'Hello! I\'m the offline demo model. I can do arithmetic with the calculator tools and remember your name. Try "What is (2123 + 2321) * 312?"' };
  }
  return { text: HELP };
}

/** Plans the next tool calls for `expr`, or answers once the tool results give its value. */
function arithmetic(expr: Expr, turn: readonly ChatMessage[], tools: readonly string[], historyLength: number): OfflineReply {
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
    results.set(key(call.name, Number(input.x), Number(input.y)), error || Number.isNaN(Number(text)) ? { error: text.replace(/^Encountered error in tool call: /, "") } : { value: Number(text) });
  }
  const ready: ToolCall[] = [];
  const evaluate = (node: Expr): number | { error: string } | undefined => {
    if (node.kind === "num") return node.value;
    const left = evaluate(node.left);
    const right = evaluate(node.right);
    if (typeof left === "object") return left;
    if (typeof right === "object") return right;
    if (left === undefined || right === undefined) return undefined;
    const name = TOOL_OF[node.op];
    const known = results.get(key(name, left, right));
    if (known) return "value" in known ? known.value : { error: `${format(node)} failed: ${known.error}` };
    if (!tools.includes(name)) return { error: `I need the ${name} tool for ${format(node)}, and it is not available.` };
    if (!ready.some((c) => c.name === name && key(c.name, (c.input as { x: number }).x, (c.input as { y: number }).y) === key(name, left, right))) {
      ready.push({ id: `call_${historyLength}_${ready.length}`, name, input: { x: left, y: right } });
    }
    return undefined;
  };
  const value = evaluate(expr);
  if (typeof value === "number") return { text: `${format(expr)} = ${formatNumber(value)}` };
  if (typeof value === "object") return { text: value.error };
  return { toolCalls: ready };
}

const key = (name: string, x: number, y: number) => `${name}(${x},${y})`;

function formatNumber(value: number): string {
  return String(Number(value.toPrecision(12)));
}

/** The expression as text, with parentheses only where precedence needs them. */
function format(node: Expr, parent?: Op, right = false): string {
  if (node.kind === "num") return formatNumber(node.value);
  const text = `${format(node.left, node.op)} ${node.op} ${format(node.right, node.op, true)}`;
  if (!parent) return text;
  const needs = PRECEDENCE[node.op] < PRECEDENCE[parent] || (right && PRECEDENCE[node.op] === PRECEDENCE[parent] && (parent === "-" || parent === "/"));
  return needs ? `(${text})` : text;
}

/** The arithmetic in a message ("plus", "times", "divided by" … included), if there is any. */
function findExpression(text: string): Expr | undefined {
  const normalized = text
    .replace(/\bmultiplied by\b|\btimes\b|×/gi, " * ")
    .replace(/\bdivided by\b|÷/gi, " / ")
    .replace(/\bplus\b/gi, " + ")
    .replace(/\bminus\b/gi, " - ");
  const candidates = normalized.match(/[-+*/().\d\s]+/g) ?? [];
  for (const candidate of candidates.map((c) => c.trim()).sort((a, b) => b.length - a.length)) {
    if (!/\d\s*\)?\s*[-+*/]\s*\(?\s*-?\d/.test(candidate)) continue;
    const parsed = parse(candidate);
    if (parsed) return parsed;
  }
  return undefined;
}

/** A recursive-descent parser for + - * / and parentheses; undefined if `text` is not exactly one expression. */
function parse(text: string): Expr | undefined {
  const tokens = text.match(/\d+(?:\.\d+)?|\.\d+|[-+*/()]/g) ?? [];
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
      return inner?.kind === "num" ? { kind: "num", value: -inner.value } : undefined;
    }
    return token !== undefined && /^[\d.]/.test(token) ? { kind: "num", value: Number(token) } : undefined;
  };
  const product = binary(atom, ["*", "/"]);
  const sum = binary(product, ["+", "-"]);
  const expr = sum();
  return expr && at === tokens.length && expr.kind === "op" ? expr : undefined;
}

/** "My name is Logan", "I'm Logan", "call me Logan" → "Logan". */
function statedName(text: string): string | undefined {
  const match = /\b(?:[Mm]y name is|[Mm]y name's|I am|I'm|[Cc]all me)\s+([A-Z][\p{L}'-]*(?:\s+[A-Z][\p{L}'-]*)?)/u.exec(text) ?? /\bmy name is\s+([\p{L}'-]+)/iu.exec(text);
  const name = match?.[1];
  return name ? name[0]?.toUpperCase() + name.slice(1) : undefined;
}

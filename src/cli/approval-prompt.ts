/**
 * Asking the user in the terminal whether a tool call may run (`Approve DELETE /api/users/7?
 * [y/N]`), during a turn: stdin is read by the chat's prompt too, so both take their lines from
 * one queue, whichever asks first gets the next line.
 */
import type { Interface } from "node:readline";
import type { BaseTool, ToolCall } from "@llamaindex/core/llms";
// rest-calls.ts alone, not rest-api.ts: a chat without a REST tool then loads none of the
// OpenAPI reading and HTTP client code (6 files) just to ask about a calculator call.
import { describeRestCall } from "../../workflows/tools/rest-calls.ts";
import { argumentsAsRun } from "../tools/tool-calls.ts";
import type { ToolApprovalRequestEvent } from "../../events/index.ts";
import { terminalSafe } from "./terminal-text.ts";
import type { Terminal } from "./render.ts";

/**
 * The lines of a readline interface, one reader at a time: the chat loop asks for the next
 * message, an approval prompt for the answer. `undefined` once the input has ended.
 * @example
 * const lines = new LineQueue(createInterface({ input: process.stdin }));
 * const line = await lines.next();
 */
export class LineQueue {
  readonly #lines: string[] = [];
  #waiting: ((line: string | undefined) => void) | undefined;
  #ended = false;

  constructor(readonly rl: Interface) {
    rl.on("line", (line: string) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting) waiting(line);
      else this.#lines.push(line);
    });
    rl.on("close", () => {
      this.#ended = true;
      this.#waiting?.(undefined);
      this.#waiting = undefined;
    });
  }

  /** The next line; `undefined` when the input ended, or when `signal` aborts first (the line then stays for the next reader). */
  next(signal?: AbortSignal): Promise<string | undefined> {
    if (this.#lines.length > 0) return Promise.resolve(this.#lines.shift());
    if (this.#ended || signal?.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const stop = () => {
        if (this.#waiting === done) this.#waiting = undefined;
        resolve(undefined);
      };
      const done = (line: string | undefined) => {
        signal?.removeEventListener("abort", stop);
        resolve(line);
      };
      this.#waiting = done;
      signal?.addEventListener("abort", stop, { once: true });
    });
  }
}

/** A human's answer to one approval request. @example `{ approved: false, reason: "The user said no." }` */
export interface TerminalAnswer {
  readonly approved: boolean;
  readonly reason?: string;
}

/**
 * The question for a call: `Approve DELETE /api/users/7?` for a REST tool's call (with the body
 * it sends, if any), else the tool's name and arguments.
 * @example approvalQuestion({ id: "c1", name: "call_rest_api", input: { method: "DELETE", path: "/api/users/7" } }, [hr]); // "Approve DELETE /api/users/7?"
 */
export function approvalQuestion(call: ToolCall, tools: readonly BaseTool[]): string {
  // The arguments the tool will run with: a `null` the model sent for an optional one is not sent.
  const input = argumentsAsRun(call, tools);
  const request = describeRestCall({ ...call, input: input as ToolCall["input"] }, tools);
  if (request !== undefined) {
    const body = (input as { body?: unknown } | null)?.body;
    return terminalSafe(`Approve ${request}${body === undefined ? "" : ` with ${JSON.stringify(body)}`}?`);
  }
  return terminalSafe(`Approve ${call.name}(${typeof input === "string" ? input : JSON.stringify(input)})?`);
}

/**
 * Asks `request` in the terminal and reads the answer from `lines`: "y" or "yes" approves,
 * anything else (an empty line included) refuses; the end of the input, or `signal` (the turn
 * was cancelled), refuses too.
 * @example const answer = await askApproval(ev, { term, lines, interactive: true, tools: agent.tools });
 */
export async function askApproval(
  request: ToolApprovalRequestEvent,
  options: {
    readonly term: Terminal;
    readonly lines: LineQueue;
    readonly interactive: boolean;
    /** The agent's tools, to show a REST call as the request it sends. */
    readonly tools: readonly BaseTool[];
    readonly signal?: AbortSignal;
  },
): Promise<TerminalAnswer> {
  const { term, lines, interactive } = options;
  const question = `${approvalQuestion(request.toolCall, options.tools)} [y/N] `;
  const c = term.colors;
  if (interactive) {
    // Readline draws the question as its prompt, so the user edits the answer as a message.
    lines.rl.setPrompt(term.out.rendered((term.outColors ?? c).yellow(question)));
    lines.rl.prompt();
  } else term.err.write(c.yellow(question));
  const line = await lines.next(options.signal);
  if (!interactive) term.err.write(`${line === undefined ? "" : terminalSafe(line)}\n`); // a transcript shows what was answered
  if (line === undefined) {
    if (interactive) term.out.write("\n");
    return { approved: false, reason: options.signal?.aborted ? "The user cancelled the turn." : "No answer: the input ended." };
  }
  const approved = /^\s*y(es)?\s*$/i.test(line);
  term.err.write(approved ? c.green("  approved\n") : c.red("  not approved\n"));
  return approved ? { approved: true } : { approved: false, reason: "The user said no." };
}

/**
 * The CLI's conversations: one question (`ask`) or a chat on stdin (`chat`), in memory or in
 * a stored session. Ctrl-C cancels the turn in progress; at the prompt it quits.
 */
import { createInterface } from "node:readline";
import type { Interface } from "node:readline";
import { Readable } from "node:stream";
import { Context, WorkflowCancelledByUser } from "../core/internal.ts";
import type { Event } from "../core/internal.ts";
import type { AgentInput, AgentResult, FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import type { Sessions } from "../sessions/sessions.ts";
import { ToolApprovalEvent, ToolApprovalRequestEvent as ToolApprovalRequestEventClass } from "../../events/index.ts";
import type { ToolApprovalRequestEvent } from "../../events/index.ts";
import { LineQueue, askApproval } from "./approval-prompt.ts";
import { renderTurn } from "./render.ts";
import { terminalSafe } from "./terminal-text.ts";
import type { Terminal } from "./render.ts";

/** What a conversation needs. */
export interface ChatOptions {
  readonly agent: FunctionCallingAgent;
  readonly term: Terminal;
  /** With `sessionId`: every turn is loaded from and saved to this store. */
  readonly sessions?: Sessions<AgentInput, AgentResult> | undefined;
  readonly sessionId?: string | undefined;
  /**
   * Shows a turn that failed (one line on stderr) in a chat, which then goes on to the next
   * prompt. Without it, a failed turn ends the chat by rejecting.
   */
  readonly report?: ((error: unknown) => unknown) | undefined;
  /** Where the turns run instead of this process (durable session turns on DBOS workers), and how `/reset` starts over. */
  readonly turns?: TurnSource | undefined;
}

/** One turn of the conversation, wherever it runs. */
export interface Turn extends PromiseLike<AgentResult> {
  streamEvents(): AsyncIterable<Event>;
  cancel(): void;
  sendEvent(event: Event): void;
}

/** Turns that run elsewhere than in this process. @example `const turns: TurnSource = { turn: (input) => remoteTurn(input), reset: async () => "Started over." }` */
export interface TurnSource {
  turn(input: string): Turn;
  /** Starts the conversation over; resolves with what to tell the user. */
  reset(): Promise<string>;
}

/** A conversation in memory (one Context) or in a stored session. */
class Conversation {
  #ctx: Context;
  constructor(readonly options: ChatOptions) {
    this.#ctx = new Context(options.agent);
  }

  turn(input: string): Turn {
    const { sessions, sessionId, agent, turns } = this.options;
    if (turns) return turns.turn(input);
    if (sessions && sessionId !== undefined) return sessions.run(sessionId, { input });
    const handler = agent.run({ input }, { ctx: this.#ctx });
    return Object.assign(handler, { sendEvent: (event: Event) => handler.ctx.sendEvent(event) });
  }

  async reset(): Promise<string> {
    const { sessions, sessionId, agent, turns } = this.options;
    if (turns) return turns.reset();
    this.#ctx = new Context(agent);
    if (sessions && sessionId !== undefined) {
      await sessions.delete(sessionId);
      return `Started a new conversation (deleted the stored session "${sessionId}").`;
    }
    return "Started a new conversation.";
  }
}

/**
 * Asks one question: streams the answer to stdout, or prints `{ response, sources }` with `json`.
 * A tool call the agent must have approved is asked on the terminal, its answer read from
 * `input` (stdin); without `input`, or once it has ended, such calls are refused.
 * @example await ask("What is (2123 + 2321) * 312?", { agent, term, json: false });
 */
export async function ask(question: string, options: ChatOptions & { readonly json: boolean; readonly input?: Readable }): Promise<void> {
  const turn = new Conversation(options).turn(question);
  let lines: LineQueue | undefined;
  const approve = async (request: ToolApprovalRequestEvent) => {
    // Made at the first question only: a one-shot answer that needs no approval leaves stdin alone.
    lines ??= new LineQueue(readerOf(options.input, options.term));
    const answer = await askApproval(request, { term: options.term, lines, interactive: isTTY(options.input), tools: options.agent.tools });
    turn.sendEvent(new ToolApprovalEvent({ approvalId: request.approvalId, ...answer }));
  };
  try {
    if (options.json) {
      // Nothing is rendered, but approvals are still asked (on stderr).
      for await (const ev of turn.streamEvents()) if (isApprovalRequest(ev)) await approve(ev);
      const result = await turn;
      options.term.out.write(`${JSON.stringify(result, null, 2)}\n`);
      return;
    }
    await renderTurn(turn.streamEvents(), options.term, approve);
    await turn;
  } finally {
    lines?.rl.close();
  }
}

const isTTY = (input: Readable | undefined) => Boolean((input as { isTTY?: boolean } | undefined)?.isTTY);

function readerOf(input: Readable | undefined, term: Terminal): Interface {
  const interactive = isTTY(input);
  return createInterface({
    input: input ?? emptyInput(),
    output: interactive ? term.readlineOutput : undefined,
    terminal: interactive,
  });
}

async function* nothing(): AsyncGenerator<string> {}
function emptyInput(): Readable {
  return Readable.from(nothing());
}

function isApprovalRequest(ev: Event): ev is ToolApprovalRequestEvent {
  return ev instanceof ToolApprovalRequestEventClass;
}

const CHAT_HELP = "Commands: /reset starts over, /exit (or Ctrl-C) quits, /help shows this. Anything else is sent to the model.\n";

/**
 * Chats line by line on `input` until it ends, `/exit`, or Ctrl-C at the prompt; resolves with
 * how many turns failed (each shown by `options.report`; a cancelled turn is not a failure).
 * @example const failed = await chat({ agent, term, report: (e) => console.error(String(e)) }, process.stdin);
 */
export async function chat(options: ChatOptions, input: Readable): Promise<number> {
  const { term } = options;
  const interactive = Boolean((input as { isTTY?: boolean }).isTTY);
  const rl = createInterface({ input, output: interactive ? term.readlineOutput : undefined, terminal: interactive });
  // The chat's messages and the answers to approval questions come from the same lines.
  const lines = new LineQueue(rl);
  const conversation = new Conversation(options);
  let current: Turn | undefined;
  let cancelTurn: AbortController | undefined;
  let failed = 0;
  const failedTurn = (error: unknown) => {
    if (!options.report) throw error;
    options.report(error);
    failed++;
  };
  rl.on("SIGINT", () => {
    if (current) {
      current.cancel();
      cancelTurn?.abort(); // an approval question waiting for its answer is answered no
    } else rl.close();
  });
  const prompt = () => {
    rl.setPrompt((term.outColors ?? term.colors).bold("you › ")); // the prompt is written to `out`; an approval question changes it
    rl.prompt();
  };
  if (interactive) {
    term.err.write(term.colors.dim("Type a message; /reset starts over, /exit (or Ctrl-C) quits.\n"));
    prompt();
  }
  for (let raw = await lines.next(); raw !== undefined; raw = await lines.next()) {
    const line = raw.trim();
    if (line === "/exit" || line === "/quit") break;
    if (line === "/reset") {
      try {
        term.err.write(`${await conversation.reset()}\n`);
      } catch (error) {
        failedTurn(error); // e.g. the session store is unreachable
      }
    } else if (line === "/help" || line === "/?") {
      term.err.write(CHAT_HELP);
    } else if (/^\/[A-Za-z?]\S*$/.test(line)) {
      // A mistyped command is not a question for the model.
      term.err.write(`${term.colors.yellow(`${terminalSafe(line)} is not a chat command.`)} ${CHAT_HELP}`);
    } else if (line !== "") {
      const turn = (current = conversation.turn(line));
      const cancelled = (cancelTurn = new AbortController()).signal;
      const approve = async (request: ToolApprovalRequestEvent) => {
        const answer = await askApproval(request, { term, lines, interactive, tools: options.agent.tools, signal: cancelled });
        if (!cancelled.aborted) turn.sendEvent(new ToolApprovalEvent({ approvalId: request.approvalId, ...answer }));
      };
      try {
        await renderTurn(turn.streamEvents(), term, approve);
        await turn;
      } catch (error) {
        if (error instanceof WorkflowCancelledByUser) term.err.write(term.colors.yellow("(cancelled)\n"));
        else failedTurn(error);
      } finally {
        current = undefined;
        cancelTurn = undefined;
      }
    }
    if (interactive) prompt();
  }
  rl.close();
  return failed;
}

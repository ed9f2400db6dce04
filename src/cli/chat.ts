/**
 * The CLI's conversations: one question (`ask`) or a chat on stdin (`chat`), in memory or in
 * a stored session. Ctrl-C cancels the turn in progress; at the prompt it quits.
 */
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { Context } from "../core/context.ts";
import type { Event } from "../core/event.ts";
import { WorkflowCancelledByUser } from "../core/errors.ts";
import type { AgentInput, AgentResult, FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import type { Sessions } from "../sessions/sessions.ts";
import { renderTurn } from "./render.ts";
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
}

interface Turn extends PromiseLike<AgentResult> {
  streamEvents(): AsyncIterable<Event>;
  cancel(): void;
}

/** A conversation in memory (one Context) or in a stored session. */
class Conversation {
  #ctx: Context;
  constructor(readonly options: ChatOptions) {
    this.#ctx = new Context(options.agent);
  }

  turn(input: string): Turn {
    const { sessions, sessionId, agent } = this.options;
    return sessions && sessionId !== undefined ? sessions.run(sessionId, { input }) : agent.run({ input }, { ctx: this.#ctx });
  }

  async reset(): Promise<string> {
    const { sessions, sessionId, agent } = this.options;
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
 * @example await ask("What is (2123 + 2321) * 312?", { agent, term, json: false });
 */
export async function ask(question: string, options: ChatOptions & { readonly json: boolean }): Promise<void> {
  const turn = new Conversation(options).turn(question);
  if (options.json) {
    const result = await turn;
    options.term.out.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  await renderTurn(turn.streamEvents(), options.term);
  await turn;
}

/**
 * Chats line by line on `input` until it ends, `/exit`, or Ctrl-C at the prompt; resolves with
 * how many turns failed (each shown by `options.report`; a cancelled turn is not a failure).
 * @example const failed = await chat({ agent, term, report: (e) => console.error(String(e)) }, process.stdin);
 */
export async function chat(options: ChatOptions, input: Readable): Promise<number> {
  const { term } = options;
  const interactive = Boolean((input as { isTTY?: boolean }).isTTY);
  const rl = createInterface({ input, output: interactive ? (term.out as NodeJS.WritableStream) : undefined, terminal: interactive });
  const conversation = new Conversation(options);
  let current: Turn | undefined;
  let failed = 0;
  const failedTurn = (error: unknown) => {
    if (!options.report) throw error;
    options.report(error);
    failed++;
  };
  rl.on("SIGINT", () => {
    if (current) current.cancel();
    else rl.close();
  });
  if (interactive) {
    term.err.write(term.colors.dim("Type a message; /reset starts over, /exit (or Ctrl-C) quits.\n"));
    rl.setPrompt((term.outColors ?? term.colors).bold("you › ")); // the prompt is written to `out`
    rl.prompt();
  }
  for await (const raw of rl) {
    const line = raw.trim();
    if (line === "/exit" || line === "/quit") break;
    if (line === "/reset") {
      try {
        term.err.write(`${await conversation.reset()}\n`);
      } catch (error) {
        failedTurn(error); // e.g. the session store is unreachable
      }
    } else if (line !== "") {
      current = conversation.turn(line);
      try {
        await renderTurn(current.streamEvents(), term);
        await current;
      } catch (error) {
        if (error instanceof WorkflowCancelledByUser) term.err.write(term.colors.yellow("(cancelled)\n"));
        else failedTurn(error);
      } finally {
        current = undefined;
      }
    }
    if (interactive) rl.prompt();
  }
  rl.close();
  return failed;
}

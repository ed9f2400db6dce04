/**
 * Shows one agent turn in a terminal as it happens: reply text streamed to stdout, tool calls
 * and their results on stderr, and a status line while nothing has arrived yet (TTY only).
 */
import { FunctionOutputEvent, StreamEvent, ToolApprovalRequestEvent, ToolCallEvent } from "../../events/index.ts";
import type { Event } from "../core/internal.ts";
import { TerminalTextFilter, terminalSafe } from "./terminal-text.ts";
import type { TerminalColors, TerminalWriter } from "./terminal-text.ts";

/**
 * Where the CLI writes, and whether it may draw (colours, status line). Both streams filter
 * every write through `terminalSafe`: text from a model, a tool, a server or a stored message
 * cannot retitle the window, clear the screen or reach the clipboard, wherever it is printed.
 */
export interface Terminal {
  readonly out: TerminalWriter;
  readonly err: TerminalWriter;
  /** stderr is a TTY: draw the status line. */
  readonly tty: boolean;
  /** Colours for what goes to `err` (on only when stderr is a terminal): `err.colors`. */
  readonly colors: TerminalColors;
  /** Colours for what goes to `out` (the chat prompt); decided for stdout on its own: `out.colors`. */
  readonly outColors?: TerminalColors;
  /**
   * stdout itself, for readline alone: it echoes what the user types and draws the line being
   * edited. Its prompt goes through `out.rendered` first.
   */
  readonly readlineOutput?: NodeJS.WritableStream;
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A one-line status on stderr, redrawn in place; invisible when stderr is not a TTY. */
class StatusLine {
  #timer: ReturnType<typeof setInterval> | undefined;
  #frame = 0;
  constructor(readonly term: Terminal) {}

  show(text: string): void {
    if (!this.term.tty) return;
    this.clear();
    const draw = () => {
      this.term.err.clearLine();
      this.term.err.write(`${this.term.colors.cyan(FRAMES[this.#frame++ % FRAMES.length] as string)} ${this.term.colors.dim(text)}`);
    };
    draw();
    this.#timer = setInterval(draw, 80);
    this.#timer.unref();
  }

  clear(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.term.err.clearLine();
  }
}

/**
 * Writes a turn's events as they stream; returns once the stream ends. A tool call that needs
 * the user's yes is handed to `approve`, which asks and answers before the turn goes on.
 * @example
 * await renderTurn(handler.streamEvents(), terminal);
 * const result = await handler;
 */
export async function renderTurn(events: AsyncIterable<Event>, term: Terminal, approve?: (request: ToolApprovalRequestEvent) => Promise<void>): Promise<void> {
  const status = new StatusLine(term);
  const c = term.colors;
  let atLineStart = true;
  let replied = false;
  // One filter for the whole reply: an escape sequence may be split across deltas.
  const reply = new TerminalTextFilter();
  status.show("thinking…");
  try {
    for await (const ev of events) {
      if (ev instanceof StreamEvent) {
        status.clear();
        const text = reply.write(ev.delta);
        if (text === "") continue;
        term.out.write(text);
        atLineStart = text.endsWith("\n");
        replied = true;
      } else if (ev instanceof ToolCallEvent) {
        status.clear();
        if (!atLineStart) term.out.write("\n");
        atLineStart = true;
        status.show(`running ${ev.toolCalls.map((call) => call.name).join(", ")}…`);
      } else if (ev instanceof FunctionOutputEvent) {
        status.clear();
        const { toolName, input, content, isError } = ev.output;
        const args = terminalSafe(typeof input === "string" ? input : JSON.stringify(input));
        const result = terminalSafe(content);
        term.err.write(`${c.dim("  ↳")} ${c.bold(terminalSafe(toolName))}${c.dim(`(${args})`)} ${c.dim("→")} ${isError ? c.red(result) : c.green(result)}\n`);
        status.show("thinking…");
      } else if (ev instanceof ToolApprovalRequestEvent && approve) {
        status.clear();
        if (!atLineStart) term.out.write("\n");
        atLineStart = true;
        await approve(ev);
        status.show(`running ${terminalSafe(ev.toolCall.name)}…`);
      }
    }
  } finally {
    status.clear();
    if (replied && !atLineStart) term.out.write("\n");
  }
}

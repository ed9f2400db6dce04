/**
 * `stepflow run <module> [workflow] --input JSON`: one run of a user's workflow in this
 * process, its events printed on stderr as they come, its result on stdout. A step that asks a
 * human (an `InputRequiredEvent`) is asked in the terminal; the line typed is sent back as a
 * `HumanResponseEvent` with `{ response }`. A run that waits for any other event from outside
 * says so, rather than staying silent until its timeout.
 */
import { createInterface } from "node:readline";
import { encodeEvent, encodeValue, eventTypeName, HumanResponseEvent, InputRequiredEvent, quoteInput, runOf, StopEvent } from "../core/internal.ts";
import type { EventClass } from "../core/internal.ts";
import { LineQueue } from "./approval-prompt.ts";
import { UsageError } from "./errors.ts";
import { loadWorkflows, pickWorkflow } from "./load-workflows.ts";
import type { Terminal } from "./render.ts";
import { terminalSafe } from "./terminal-text.ts";

/** Options of `stepflow run`. */
export interface RunOptions {
  /** The run's input as JSON (default `{}`). */
  readonly input?: string;
  /** Print the result as JSON even when it is a string. */
  readonly json?: boolean;
}

/**
 * Runs workflow `name` (or the module's only one) of `modulePath` and prints what happens;
 * resolves with the exit code.
 * @example process.exitCode = await runWorkflowCommand("./flows.ts", "orders", { input: '{"item":"tea"}' }, term, process.stdin);
 */
export async function runWorkflowCommand(
  modulePath: string,
  name: string | undefined,
  options: RunOptions,
  term: Terminal,
  stdin: NodeJS.ReadableStream,
): Promise<number> {
  const loaded = await loadWorkflows(modulePath);
  const served = pickWorkflow(loaded, name);
  let input = parseInput(options.input, served.name);
  if (served.inputSchema) {
    const checked = served.inputSchema.safeParse(input);
    if (!checked.success) {
      const problems = checked.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "input"}: ${issue.message}`).join("; ");
      throw new UsageError(`The input does not fit the input schema of ${served.name}: ${problems}.`);
    }
    input = checked.data; // with the schema's defaults filled in
  }
  const handler = served.workflow.run(input as never);
  const dim = term.colors.dim;
  let lines: LineQueue | undefined;
  let asking = false;
  const run = runOf(handler.ctx);
  run?.subscribe((change) => {
    if (change.kind !== "runIdle" || asking) return;
    const waited = [...new Set(run.state.waiters.map((w) => eventTypeName(w.type)))];
    const what = waited.length > 0 ? `${waited.join(", ")} from outside` : "an event from outside";
    term.err.write(`${dim(`· waiting for ${terminalSafe(what)}; stepflow run sends only the answers to questions (InputRequiredEvent)`)}\n`);
  });
  try {
    for await (const event of handler.streamEvents()) {
      const type = eventTypeName(event.constructor as EventClass);
      if (event instanceof StopEvent) continue;
      if (!(event instanceof InputRequiredEvent)) {
        const data = JSON.stringify(encodeEvent(event, type).data);
        term.err.write(`${dim(`· ${terminalSafe(type)}`)} ${terminalSafe(data.length > 300 ? `${data.slice(0, 300)}…` : data)}\n`);
      } else {
        const prefix = typeof (event as { prefix?: unknown }).prefix === "string" ? (event as { prefix: string }).prefix : "Your answer";
        term.err.write(`${terminalSafe(prefix)} > `);
        lines ??= new LineQueue(createInterface({ input: stdin, terminal: false }));
        asking = true;
        const line = await lines.next();
        asking = false;
        if (line === undefined) {
          handler.cancel();
          throw new UsageError(`${served.name} asked "${prefix}" and the input ended before an answer: run it in a terminal, or pipe the answers in.`);
        }
        handler.ctx.sendEvent(new HumanResponseEvent({ response: line }));
      }
    }
    const result = await handler;
    const text = typeof result === "string" && !options.json ? result : JSON.stringify(encodeValue(result, "result"), null, 2);
    term.out.write(`${terminalSafe(text)}\n`);
    return 0;
  } finally {
    lines?.rl.close();
  }
}

function parseInput(text: string | undefined, name: string): unknown {
  if (text === undefined) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(
      `--input takes JSON, like --input '{"item":"tea"}'; got ${quoteInput(text)} (${(error as Error).message}). ${name}'s input schema is in stepflow serve's /api/workflows.`,
    );
  }
}

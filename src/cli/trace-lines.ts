/**
 * `--verbose` writes the workflow's trace on stderr while the reply streams to stdout: in a
 * terminal both land on one screen, and a trace line written while the reply's line is still
 * open would be glued onto it ("2 + 3 = 5Step handleLlmInput produced …"). Trace lines wait
 * until the reply's line ends.
 */

/** A writable end, as the CLI uses it. */
interface Writable {
  write(text: string): unknown;
}

/**
 * stdout for the reply and stderr for the trace, kept from sharing a line.
 * @example
 * const lines = new TraceLines(process.stdout, process.stderr);
 * lines.out.write("2 + 3 ");
 * lines.trace("Step handleLlmInput produced event StopEvent\n"); // held back
 * lines.out.write("= 5\n"); // the reply's line ends: the trace line follows it
 */
export class TraceLines<Out extends Writable = NodeJS.WriteStream> {
  #midLine = false;
  readonly #held: string[] = [];
  /**
   * stdout itself for everything (readline reads its columns, listens to its resize), but for
   * `write`, which notes whether the last line is open.
   */
  readonly out: Out;

  constructor(
    stdout: Out,
    private readonly stderr: Writable,
  ) {
    const write = (text: string | Uint8Array, ...rest: unknown[]) => {
      const written = (stdout.write as (...args: unknown[]) => unknown).call(stdout, text, ...rest);
      const str = typeof text === "string" ? text : "";
      if (str !== "") this.#midLine = !str.endsWith("\n");
      if (!this.#midLine) this.flush();
      return written;
    };
    this.out = new Proxy(stdout, {
      get: (target, property) => {
        if (property === "write") return write;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** Writes a trace line (ending with "\n") now, or once the reply's line has ended. */
  trace(line: string): void {
    if (this.#midLine) this.#held.push(line);
    else this.stderr.write(line);
  }

  /** Writes the held lines (also when the run ends without finishing its line). */
  flush(): void {
    for (const line of this.#held.splice(0)) this.stderr.write(line);
  }
}

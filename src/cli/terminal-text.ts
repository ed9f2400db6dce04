/**
 * Makes text the CLI did not write itself (model replies, tool results, stored messages) safe
 * to print on a terminal: a model or a server it quotes must not be able to retitle the window,
 * clear the screen, move the cursor over earlier lines or write to the clipboard. Every escape
 * sequence and control character goes, except newline and tab; stepflow's own colours are added
 * after this filter, so they still print.
 */

/**
 * Where the filter is: in text; after ESC (the next character says which sequence); in ESC and
 * intermediate bytes (ESC ( B); in a CSI (ESC [ or U+009B: parameters, then one final byte); in
 * an OSC/DCS/SOS/PM/APC string (ended by BEL or ST, that is ESC \ or U+009C); after ESC in one.
 */
type State = "text" | "escape" | "escape-intermediate" | "csi" | "string" | "string-escape";

/**
 * Strips control sequences from text that arrives in chunks; a sequence split across chunks is
 * still removed whole (it is held back until its end arrives).
 * @example
 * const filter = new TerminalTextFilter();
 * filter.write("Hi \x1b]0;pwned") + filter.write("\x07there") // "Hi there"
 */
export class TerminalTextFilter {
  #state: State = "text";

  /** The printable part of `chunk`, given everything written before. */
  write(chunk: string): string {
    let out = "";
    for (const ch of chunk) {
      const code = ch.codePointAt(0) as number;
      switch (this.#state) {
        case "text":
          if (code === 0x1b) this.#state = "escape";
          else if (code === 0x9b) this.#state = "csi";
          else if (code === 0x9d || code === 0x90 || code === 0x98 || code === 0x9e || code === 0x9f) this.#state = "string";
          else if (ch === "\n" || ch === "\t" || !isControl(code)) out += ch;
          break;
        case "escape":
          if (ch === "[") this.#state = "csi";
          else if (ch === "]" || ch === "P" || ch === "X" || ch === "^" || ch === "_") this.#state = "string";
          else if (code >= 0x20 && code <= 0x2f) this.#state = "escape-intermediate";
          else if (code === 0x1b) this.#state = "escape";
          else this.#state = "text"; // a two-character sequence (ESC c, ESC 7 …): both dropped
          break;
        case "escape-intermediate":
          if (code < 0x20 || code > 0x2f) this.#state = "text";
          break;
        case "csi":
          if (code >= 0x40 && code <= 0x7e) this.#state = "text";
          else if (code === 0x1b) this.#state = "escape";
          else if (ch === "\n") {
            // Not a CSI after all (a terminal would have ended it): keep the line break.
            this.#state = "text";
            out += ch;
          }
          break;
        case "string":
          if (code === 0x07 || code === 0x9c) this.#state = "text";
          else if (code === 0x1b) this.#state = "string-escape";
          else if (ch === "\n") {
            // An unterminated title must not swallow the rest of the reply: without its ESC,
            // what follows is plain text again.
            this.#state = "text";
            out += ch;
          }
          break;
        case "string-escape":
          this.#state = ch === "\\" ? "text" : ch === "\n" ? "text" : "string";
          if (ch === "\n") out += ch;
          break;
      }
    }
    return out;
  }
}

/**
 * `text` without escape sequences or control characters other than newline and tab.
 * @example terminalSafe("\x1b[2Jdone\r") // "done"
 */
export function terminalSafe(text: string): string {
  return new TerminalTextFilter().write(text);
}

function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/** The styles the CLI uses, as picocolors names them, with their SGR codes (on, off). */
const STYLES = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;
type Style = keyof typeof STYLES;
const STYLE_NAMES = Object.keys(STYLES) as Style[];
/**
 * A style's start and end are marked in text by characters of Unicode's private use area, which
 * survive `terminalSafe`; the writer turns them into escape codes after filtering, so that the
 * CLI's own colours print and a model's or a server's escape codes do not. Text that holds
 * these characters can at most colour itself with these six styles.
 */
const MARK_BASE = 0xf8f0;
const MARKS = new RegExp(`[\\u${MARK_BASE.toString(16)}-\\u${(MARK_BASE + 2 * STYLE_NAMES.length - 1).toString(16)}]`, "g");

/** The CLI's colours: each wraps text in a style, or leaves it as it is when colour is off. @example `term.colors.dim("(cancelled)")` */
export type TerminalColors = { readonly [style in Style]: (text: string) => string };

/** A stream of the terminal, every write of which goes through `terminalSafe`. */
export interface TerminalWriter {
  /** Writes `text` without escape sequences or control characters but newline and tab; the CLI's colours stay. */
  write(text: string): void;
  /** Goes back to the start of the line and clears it (for a status line redrawn in place). */
  clearLine(): void;
  /** `text` as `write` would send it: for readline's prompt, which readline writes itself. */
  rendered(text: string): string;
  /** This stream's colours: off when it is not a terminal or NO_COLOR is set. */
  readonly colors: TerminalColors;
}

/**
 * The one way the CLI writes to a terminal: `stream` (stdout or stderr) behind `terminalSafe`.
 * @example
 * const err = terminalWriter(process.stderr, Boolean(process.stderr.isTTY) && !process.env.NO_COLOR);
 * err.write(`${err.colors.red("stepflow:")} ${message}\n`); // red, and message cannot retitle the window
 */
export function terminalWriter(stream: { write(text: string): unknown }, color: boolean): TerminalWriter {
  const colors = Object.fromEntries(
    STYLE_NAMES.map((style, i) => [style, color ? (text: string) => `${mark(2 * i)}${text}${mark(2 * i + 1)}` : (text: string) => text]),
  ) as TerminalColors;
  const rendered = (text: string) =>
    terminalSafe(text).replace(MARKS, (ch) => {
      if (!color) return "";
      const index = (ch.codePointAt(0) as number) - MARK_BASE;
      return `\x1b[${STYLES[STYLE_NAMES[index >> 1] as Style][index & 1]}m`;
    });
  return {
    write: (text) => void stream.write(rendered(text)),
    clearLine: () => void stream.write("\r\x1b[2K"),
    rendered,
    colors,
  };
}

function mark(index: number): string {
  return String.fromCodePoint(MARK_BASE + index);
}

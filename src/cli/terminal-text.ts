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

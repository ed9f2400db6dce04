/**
 * Server-sent events (the `text/event-stream` format of the HTML standard), parsed from text
 * as it arrives. Hand-rolled because the OpenAI SDK's decoders are internal (not exported) and
 * its stream costs more than reading the body with this (openai-stream.ts says how much). This
 * is the same grammar the SDK accepts: `\n`, `\r\n` or `\r` line ends, `:` comments, several
 * `data:` lines joined by `\n`, one optional space after the colon; `id` and `retry` ignored.
 */

/** One event: its `event:` field, if any, and its `data:` lines joined by `\n`. */
export interface ServerSentEvent {
  readonly event: string | undefined;
  readonly data: string;
}

/**
 * Feed it decoded text in any pieces; it returns the events each piece completes. An event is
 * complete at its blank line: text left when the stream ends is dropped, as the standard says.
 * @example
 * const parser = new ServerSentEventParser();
 * parser.feed('data: {"a":1}\n\nda'); // [{ event: undefined, data: '{"a":1}' }]
 * parser.feed("ta: [DONE]\n\n"); // [{ event: undefined, data: "[DONE]" }]
 */
export class ServerSentEventParser {
  /** Text after the last line end seen. */
  #partial = "";
  /** The last piece ended with `\r`: a `\n` starting the next one belongs to that line end. */
  #afterCR = false;
  #event: string | undefined = undefined;
  #data: string[] = [];

  feed(text: string): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    if (text === "") return events; // keeps #afterCR for the piece that follows
    let start = 0;
    if (this.#afterCR && text.startsWith("\n")) start = 1;
    this.#afterCR = false;
    // The next "\n" and "\r" are searched for again only once passed: a piece of many "\n"
    // lines and no "\r" would otherwise be searched to its end for each line.
    let lf = -2;
    let cr = -2;
    for (;;) {
      if (lf !== -1 && lf < start) lf = text.indexOf("\n", start);
      if (cr !== -1 && cr < start) cr = text.indexOf("\r", start);
      const end = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr;
      if (end === -1) break;
      const line = this.#partial === "" ? text.slice(start, end) : this.#partial + text.slice(start, end);
      this.#partial = "";
      this.#line(line, events);
      start = end + 1;
      if (end === cr) {
        if (end + 1 === text.length) this.#afterCR = true;
        else if (text[end + 1] === "\n") start++;
      }
    }
    this.#partial += text.slice(start);
    return events;
  }

  #line(line: string, events: ServerSentEvent[]): void {
    if (line === "") {
      if (this.#data.length > 0) events.push({ event: this.#event, data: this.#data.join("\n") });
      this.#event = undefined;
      this.#data = [];
      return;
    }
    const colon = line.indexOf(":");
    if (colon === 0) return; // a comment, e.g. a keep-alive
    const field = colon === -1 ? line : line.slice(0, colon);
    const valueStart = colon === -1 ? line.length : line.charCodeAt(colon + 1) === 0x20 ? colon + 2 : colon + 1;
    if (field === "data") this.#data.push(line.slice(valueStart));
    else if (field === "event") this.#event = line.slice(valueStart);
  }
}

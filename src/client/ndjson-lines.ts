/**
 * NDJSON text cut into lines as it arrives, in time linear in its length: a line's pieces are
 * kept apart until its newline comes (appending to one string and slicing it after each line
 * copied the rest again and again: a 50 MB line took minutes), and a line longer than a cap
 * fails as soon as it passes it, before it fills the memory.
 */

/**
 * A splitter of text chunks into complete lines (without their `\n`), refusing a line of more
 * than `maxChars` characters with `tooLong(maxChars)`'s error.
 * @example
 * const split = ndjsonLines(1000, (max) => new Error(`a line over ${max} characters`));
 * split('{"a":1}\n{"b"'); // ['{"a":1}']
 * split(":2}\n"); // ['{"b":2}']
 */
export function ndjsonLines(maxChars: number, tooLong: (maxChars: number) => Error): (chunk: string) => string[] {
  let parts: string[] = [];
  let size = 0;
  return (chunk) => {
    const lines: string[] = [];
    let start = 0;
    for (let newline = chunk.indexOf("\n"); newline >= 0; newline = chunk.indexOf("\n", start)) {
      if (size + newline - start > maxChars) throw tooLong(maxChars);
      parts.push(chunk.slice(start, newline));
      lines.push(parts.length === 1 ? (parts[0] as string) : parts.join(""));
      parts = [];
      size = 0;
      start = newline + 1;
    }
    if (start < chunk.length) {
      size += chunk.length - start;
      if (size > maxChars) throw tooLong(maxChars);
      parts.push(chunk.slice(start));
    }
    return lines;
  };
}

import { describe, expect, it } from "vitest";
import { ServerSentEventParser } from "../../src/llm/server-sent-events.ts";
import type { ServerSentEvent } from "../../src/llm/server-sent-events.ts";

/** A stream with every part of the grammar the parser reads, lines ended by "\n". */
const STREAM = [
  ": keep-alive",
  "",
  'data: {"n":1}',
  "",
  "event: error",
  'data:{"n":2}', // no space after the colon
  "id: 7",
  "retry: 1000",
  "unknown: ignored",
  "",
  "data: first line",
  "data",
  "data:  two spaces keep one",
  "",
  "event: only-an-event-no-data",
  "",
  "data: [DONE]",
  "",
  "data: an event without its blank line",
].join("\n");

const EXPECTED: ServerSentEvent[] = [
  { event: undefined, data: '{"n":1}' },
  { event: "error", data: '{"n":2}' },
  { event: undefined, data: "first line\n\n two spaces keep one" },
  { event: undefined, data: "[DONE]" },
];

const parse = (...pieces: string[]) => {
  const parser = new ServerSentEventParser();
  return pieces.flatMap((piece) => parser.feed(piece));
};

describe("ServerSentEventParser", () => {
  it.each([
    ["\\n", "\n"],
    ["\\r\\n", "\r\n"],
    ["\\r", "\r"],
  ])("reads the same events with %s line ends, however the text is cut", (_name, lineEnd) => {
    const text = STREAM.replaceAll("\n", lineEnd);
    expect(parse(text)).toEqual(EXPECTED);
    for (let cut = 0; cut <= text.length; cut++) expect(parse(text.slice(0, cut), text.slice(cut))).toEqual(EXPECTED);
    expect(parse(...text)).toEqual(EXPECTED); // a character at a time
    expect(parse(...[...text].flatMap((char) => [char, ""]))).toEqual(EXPECTED); // empty pieces between
  });

  it("returns each event as soon as its blank line arrives", () => {
    const parser = new ServerSentEventParser();
    expect(parser.feed('data: {"n":1}\n')).toEqual([]);
    expect(parser.feed("\nda")).toEqual([{ event: undefined, data: '{"n":1}' }]);
    expect(parser.feed("ta: [DONE]\r")).toEqual([]);
    expect(parser.feed("\r")).toEqual([{ event: undefined, data: "[DONE]" }]);
  });

  it("reads text that is not server-sent events (a JSON body, a web page) as no events", () => {
    expect(parse('{"object":"chat.completion","choices":[]}')).toEqual([]);
    expect(parse("<!doctype html>\n<html>\n\n<body>Not found</body>\n\n</html>\n")).toEqual([]);
  });
});

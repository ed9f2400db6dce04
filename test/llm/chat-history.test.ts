import type { ChatMessage } from "@llamaindex/core/llms";
import { describe, expect, it } from "vitest";
import { messageTokens, recentHistory, toolResultIdOf, wellFormedHistory } from "../../src/llm/chat-history.ts";

const user = (content: string): ChatMessage => ({ role: "user", content });
const call = (...ids: string[]): ChatMessage => ({
  role: "assistant",
  content: "",
  options: { toolCall: ids.map((id) => ({ id, name: "add", input: { x: 1, y: 2 } })) },
});
const result = (id: string): ChatMessage => ({ role: "user", content: "3", options: { toolResult: { id, result: "3", isError: false } } });

describe("wellFormedHistory", () => {
  it("keeps a well-formed history as it is", () => {
    const history = [user("1+2 and 1+2?"), call("a", "b"), result("a"), result("b"), { role: "assistant", content: "3 and 3" } as ChatMessage];
    expect(wellFormedHistory(history)).toEqual(history);
  });

  it("drops tool results at the start whose call was trimmed away", () => {
    expect(wellFormedHistory([result("a"), result("b"), { role: "assistant", content: "3 and 3" }, user("thanks")])).toEqual([
      { role: "assistant", content: "3 and 3" },
      user("thanks"),
    ]);
  });

  it("drops a call whose results are missing, keeping what the assistant said", () => {
    const said: ChatMessage = { role: "assistant", content: "Let me add.", options: { toolCall: [{ id: "a", name: "add", input: {} }] } };
    expect(wellFormedHistory([user("1+2?"), said, user("never mind")])).toEqual([
      user("1+2?"),
      { role: "assistant", content: "Let me add." },
      user("never mind"),
    ]);
    expect(wellFormedHistory([user("1+2?"), call("a", "b"), result("a"), user("never mind")])).toEqual([user("1+2?"), user("never mind")]);
  });

  it("drops a result that answers no call of the message before it", () => {
    expect(wellFormedHistory([user("q"), call("a"), result("a"), result("zzz"), user("next")])).toEqual([user("q"), call("a"), result("a"), user("next")]);
  });
});

const words = (n: number) => user(Array.from({ length: n }, (_, i) => `word${i}`).join(" "));

describe("recentHistory", () => {
  it("keeps a history that fits, without tokenizing it", () => {
    const history = [user("Hello! My name is Logan."), { role: "assistant", content: "Nice to meet you." } as ChatMessage];
    const tokenize = () => {
      throw new Error("should not tokenize");
    };
    expect(recentHistory(history, 1000, tokenize)).toEqual(history);
  });

  it("keeps the newest messages that fit, in order", () => {
    const history = [words(300), words(10), words(10)];
    const kept = recentHistory(history, 100);
    expect(kept).toEqual([history[1], history[2]]);
  });

  it("counts bytes, not characters, before skipping the tokenizer (emoji are several tokens)", () => {
    const emoji = { role: "assistant", content: "🦙".repeat(40) } as ChatMessage; // 40 characters (80 UTF-16 units), 160 bytes, over 40 tokens
    const question = user("Show me llamas.");
    expect(recentHistory([emoji, question], 100)).toEqual([question]); // 80 UTF-16 units would have passed a length check
  });

  it("always keeps the question being answered and the newest tool call with its results, even past the limit", () => {
    const question = words(300);
    expect(recentHistory([user("earlier"), question], 100)).toEqual([question]);
    // The question, then the newest call and results that fit: older tool turns of this question go first.
    const history = [user("earlier"), question, call("a"), result("a"), call("b"), result("b")];
    expect(recentHistory(history, 100)).toEqual([question, call("b"), result("b")]);
    const hugeResult: ChatMessage = { role: "user", content: words(500).content, options: { toolResult: { id: "c", result: "…", isError: false } } };
    expect(wellFormedHistory(recentHistory([user("earlier"), user("q"), call("c"), hugeResult], 100))).toEqual([user("q"), call("c"), hugeResult]);
  });

  it("counts the arguments of tool calls", () => {
    const bigCall: ChatMessage = {
      role: "assistant",
      content: "",
      options: { toolCall: [{ id: "w", name: "write_file", input: { text: words(400).content } }] },
    };
    const history = [user("write it"), bigCall, result("w"), { role: "assistant", content: "Written." } as ChatMessage, user("thanks")];
    expect(wellFormedHistory(recentHistory(history, 100))).toEqual([{ role: "assistant", content: "Written." }, user("thanks")]);
  });

  it("counts a message far over the budget only until it is known not to fit", () => {
    const blob = user("x9/+".repeat(1_000_000)); // 4 MB that the tokenizer never saw: all of it would take seconds
    const counted: number[] = [];
    const tokenize = (message: ChatMessage, atMost: number) => (counted.push(atMost), Math.min(Buffer.byteLength(String(message.content)), atMost + 1));
    expect(recentHistory([blob, user("thanks")], 1000, tokenize)).toEqual([user("thanks")]);
    expect(counted.every((atMost) => atMost <= 1000)).toBe(true);
    expect(recentHistory([blob, user("thanks")], 1000)).toEqual([user("thanks")]); // the real tokenizer, stopped early
  });

  it("a count made with no budget (an LLM without a context window) does not spoil later counts", () => {
    const history = [user("first question"), { role: "assistant", content: words(41).content } as ChatMessage, user("second question")];
    recentHistory(history, Number.NaN);
    recentHistory(history, -5);
    expect(recentHistory(history, 60)).toEqual([user("second question")]);
  });

  it("tokenizes a long unbroken word in linear time", () => {
    const dna = user("ACGT".repeat(250_000)); // one million letters, no spaces: BPE alone is quadratic in a word's length
    const kept = recentHistory([user("earlier"), dna, user("What is this?")], 1000);
    expect(kept).toEqual([user("What is this?")]);
  });
});

describe("recentHistory with the thinking Claude's replies keep", () => {
  /** An assistant message as the Anthropic provider leaves it: its reply's blocks kept in options.anthropic.content. */
  const thought = (content: string, blocks: unknown[], calls: string[] = []): ChatMessage => ({
    role: "assistant",
    content,
    options: {
      anthropic: { content: blocks },
      ...(calls.length > 0 ? { toolCall: calls.map((id) => ({ id, name: "add", input: { x: 1, y: 2 } })) } : {}),
    } as never,
  });

  it("counts the thinking text with the tokenizer, and signatures and redacted data at one token per two decoded bytes", () => {
    const thinking = "The user wants 2123 + 2321, so I add them first.";
    const message = thought("Adding.", [
      { type: "thinking", thinking, signature: "S".repeat(400) }, // 300 bytes: 150 tokens
      { type: "redacted_thinking", data: "R".repeat(800) }, // 600 bytes: 300 tokens
      { type: "text", text: "Adding." }, // the message's own text: counted once
    ]);
    expect(messageTokens(message, 10_000)).toBe(messageTokens(user(`${thinking}Adding.`), 10_000) + 150 + 300);
  });

  it("trims a reply whose text fits but whose thinking does not", () => {
    const question = user("What is (2123 + 2321) * 312?");
    const signed = thought("Hello!", [
      { type: "thinking", thinking: "", signature: "S".repeat(4000) },
      { type: "text", text: "Hello!" },
    ]); // 1500 tokens
    expect(recentHistory([user("Hi"), signed, question], 1000)).toEqual([question]);
    const redacted = thought("Hello!", [
      { type: "redacted_thinking", data: "R".repeat(4000) },
      { type: "text", text: "Hello!" },
    ]);
    expect(recentHistory([user("Hi"), redacted, question], 1000)).toEqual([question]);
    expect(recentHistory([user("Hi"), thought("Hello!", [{ type: "thinking", thinking: words(1200).content, signature: "" }]), question], 1000)).toEqual([
      question,
    ]);
  });

  it("never sends a tool call its thinking made too big without its results, nor the results without it", () => {
    const adding = thought(
      "",
      [
        { type: "thinking", thinking: "I will add.", signature: "S".repeat(2000) },
        { type: "tool_use", id: "a" },
      ],
      ["a"],
    );
    const answer: ChatMessage = { role: "assistant", content: "1 + 2 = 3." };
    const next = user("And 2 + 2?");
    const history = [user("1 + 2?"), adding, result("a"), answer, next];
    // The call costs 750 tokens: the result fits in 200, its call does not, and it goes too.
    expect(wellFormedHistory(recentHistory(history, 200))).toEqual([answer, next]);
    for (const limit of [1, 10, 50, 100, 200, 500, 760, 780, 800, 1000, 5000]) {
      const sent = wellFormedHistory(recentHistory(history, limit));
      const at = sent.indexOf(adding);
      expect(
        sent.some((message) => toolResultIdOf(message) === "a"),
        `limit ${limit}`,
      ).toBe(at >= 0);
      if (at >= 0) expect(toolResultIdOf(sent[at + 1] as ChatMessage), `limit ${limit}`).toBe("a");
    }
    expect(wellFormedHistory(recentHistory(history, 5000))).toEqual(history);
  });
});

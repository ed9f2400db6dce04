import type { ChatMessage } from "@llamaindex/core/llms";
import { describe, expect, it } from "vitest";
import { recentHistory, wellFormedHistory } from "../src/llm/chat-history.ts";

const user = (content: string): ChatMessage => ({ role: "user", content });
const call = (...ids: string[]): ChatMessage => ({ role: "assistant", content: "", options: { toolCall: ids.map((id) => ({ id, name: "add", input: { x: 1, y: 2 } })) } });
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
    expect(wellFormedHistory([user("1+2?"), said, user("never mind")])).toEqual([user("1+2?"), { role: "assistant", content: "Let me add." }, user("never mind")]);
    expect(wellFormedHistory([user("1+2?"), call("a", "b"), result("a"), user("never mind")])).toEqual([user("1+2?"), user("never mind")]);
  });

  it("drops a result that answers no call of the message before it", () => {
    expect(wellFormedHistory([user("q"), call("a"), result("a"), result("zzz"), user("next")])).toEqual([user("q"), call("a"), result("a"), user("next")]);
  });
});

describe("recentHistory", () => {
  const words = (n: number) => user(Array.from({ length: n }, (_, i) => `word${i}`).join(" "));

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
    const emoji = user("🦙".repeat(40)); // 40 characters (80 UTF-16 units), 160 bytes, over 40 tokens
    expect(recentHistory([emoji], 100)).toEqual([]); // 80 UTF-16 units would have passed a length check
  });
});

import type { ChatMessage } from "@llamaindex/core/llms";
import { describe, expect, it } from "vitest";
import { wellFormedHistory } from "../src/llm/chat-history.ts";

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

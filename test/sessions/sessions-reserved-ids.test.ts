/** A stepflow server's session prefixes (handler:, idempotency:) are not conversations: `Sessions` starts none under them. */
import { describe, expect, it } from "vitest";
import { OfflineDemoLLM } from "../../src/llm/offline-model.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { Sessions } from "../../src/sessions/sessions.ts";
import { SessionStoreError } from "../../src/sessions/types.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";

const agent = () => new FunctionCallingAgent({ llm: new OfflineDemoLLM() });

describe("Sessions and a server's reserved session ids", () => {
  it("refuses a new conversation named handler:… or idempotency:…, saying why and what to do, and stores nothing", async () => {
    const store = await openSessionStore("memory:");
    const sessions = new Sessions(agent(), store);
    const turn = sessions.run("handler:notes", { input: "Hello! My name is Logan." });
    await expect(turn).rejects.toThrow(SessionStoreError);
    await expect(turn).rejects.toThrow(
      'Session id "handler:notes" starts with "handler:", which a stepflow server keeps for its own records (its runs are "handler:…", its Idempotency-Keys "idempotency:…") in a store it may share, and such sessions are not listed as conversations. Give the conversation another id, such as "notes".',
    );
    await expect(sessions.run("idempotency:x", { input: "Hi" })).rejects.toThrow('starts with "idempotency:"');
    expect(await store.list()).toEqual([]);
    // Only the start counts: the prefix elsewhere in an id is any other id.
    expect((await sessions.run("my-handler:notes", { input: "Hello! My name is Logan." })).response.content).toBe("Nice to meet you, Logan!");
    await store.close();
  });

  it("goes on with a conversation stored under such an id before", async () => {
    const store = await openSessionStore("memory:");
    const sessions = new Sessions(agent(), store);
    await sessions.run("notes", { input: "Hello! My name is Logan." });
    // The same conversation as it was stored under a reserved id by an earlier version.
    const earlier = await store.load("notes");
    await store.save("handler:notes", { expectedVersion: 0, snapshot: earlier?.snapshot ?? "", append: earlier?.messages.map((m) => m.json) ?? [] });
    const { response } = await sessions.run("handler:notes", { input: "What is my name?" });
    expect(response.content).toBe("Your name is Logan.");
    expect((await sessions.messages("handler:notes")).length).toBe(4);
    await store.close();
  });
});

/**
 * The sessions benchmarks' shared workload: the scripted model's turn, a store seen without
 * its journal, and another checkout's modules. No stepflow import, so the A/B scripts can drive
 * another checkout's modules with these.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** A request as the scripted model passes it: the messages, a tool result marked in its options. */
interface TurnRequest {
  readonly messages: readonly { readonly role: string; readonly options?: unknown }[];
}

/** The scripted model's reply for {@link agentTurn}. */
type TurnReply = { readonly toolCalls: { readonly name: string; readonly input: { x: number; y: number } }[] } | { readonly text: string };

const isToolResult = (message: TurnRequest["messages"][number] | undefined) => Boolean((message?.options as { toolResult?: unknown } | undefined)?.toolResult);

/**
 * add, then multiply, then the answer: 3 LLM calls and 2 tool calls a turn, whatever the history.
 * @example new ScriptedLLM(agentTurn, { delayMs: 50, record: false })
 */
export function agentTurn(request: TurnRequest): TurnReply {
  let results = 0;
  for (let i = request.messages.length - 1; i >= 0 && (request.messages[i]?.role !== "user" || isToolResult(request.messages[i])); i--)
    if (isToolResult(request.messages[i])) results++;
  if (results === 0) return { toolCalls: [{ name: "add", input: { x: 2123, y: 2321 } }] };
  if (results === 1) return { toolCalls: [{ name: "multiply", input: { x: 4444, y: 312 } }] };
  return { text: "(2123 + 2321) * 312 = 1,386,528." };
}

/** What `Sessions` uses of a store. */
interface StoreMethods {
  readonly description: string;
  load(...args: never[]): unknown;
  readMessages(...args: never[]): unknown;
  save(...args: never[]): unknown;
  list(...args: never[]): unknown;
  delete(...args: never[]): unknown;
  close(...args: never[]): unknown;
}

/**
 * `store` without its journal: what a turn costs the store when `ctx.once` claims nothing in it.
 * @example new Sessions(agent, withoutJournal(await openSessionStore(url)))
 */
export function withoutJournal<S extends StoreMethods>(store: S): Omit<S, "journal"> {
  // Only what Sessions calls; the cast drops the journal from the store's type.
  return {
    description: store.description,
    load: store.load.bind(store),
    readMessages: store.readMessages.bind(store),
    save: store.save.bind(store),
    list: store.list.bind(store),
    delete: store.delete.bind(store),
    close: store.close.bind(store),
  } as unknown as Omit<S, "journal">;
}

/**
 * What the sessions A/B scripts drive, loaded from the checkout at `root`: its own stores,
 * `Sessions`, agent, scripted model and tools.
 * @example const { Sessions, openSessionStore } = await checkoutModules("/tmp/base");
 */
export async function checkoutModules(root: string) {
  const load = (path: string) => import(pathToFileURL(join(root, path)).href);
  const [{ openSessionStore }, { Sessions }, { FunctionCallingAgent }, { ScriptedLLM }, { add, multiply }] = await Promise.all([
    load("src/sessions/open-store.ts"),
    load("src/sessions/sessions.ts"),
    load("workflows/function-calling-agent.ts"),
    load("src/llm/scripted-llm.ts"),
    load("workflows/tools/calculator.ts"),
  ]);
  return { openSessionStore, Sessions, FunctionCallingAgent, ScriptedLLM, add, multiply };
}

/**
 * A stored message of a long session, as JSON: a question (even `i`), or an answer of a few
 * sentences (odd `i`).
 * @example storedMessage(0); // '{"id":"m0","role":"user","content":"Question 0: …"}'
 */
export function storedMessage(i: number): string {
  return JSON.stringify(
    i % 2 === 0
      ? { id: `m${i}`, role: "user", content: `Question ${i}: what is ${i} * 312, and can you explain how you got it?` }
      : {
          id: `m${i}`,
          role: "assistant",
          content: `${i - 1} * 312 = ${(i - 1) * 312}. I multiplied the two numbers with the multiply tool and checked the result.`,
        },
  );
}

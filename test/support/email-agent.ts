/**
 * The smallest agent run with a side effect: "Email bob", answered by one call to a
 * `send_email` tool that records each recipient, then "Sent.". The save/cancel sweep tests
 * start it and stop it at every microtask.
 */
import { z } from "zod";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";

/** A fresh `send_email` tool, the recipients it sent to, and a run of "Email bob" using it. */
export function emailBob() {
  const emails: string[] = [];
  const sendEmail = tool({
    name: "send_email",
    description: "Send an email.",
    parameters: z.object({ to: z.string() }),
    execute: ({ to }) => (emails.push(to), "sent"),
  });
  const handler = new FunctionCallingAgent({
    llm: new ScriptedLLM([{ toolCalls: [{ id: "e1", name: "send_email", input: { to: "bob" } }] }, { text: "Sent." }]),
    tools: [sendEmail],
  }).run({ input: "Email bob" });
  return { emails, sendEmail, handler };
}

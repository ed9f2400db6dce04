// Conversations that outlive the process: each turn loads the session from SQLite, runs the
// agent and saves what the turn added. A second Sessions object on a second connection plays
// the process that serves the conversation later.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OfflineDemoLLM } from "stepflow/llm/offline";
import { Sessions, openSessionStore } from "stepflow/sessions";
import { calculatorTools } from "stepflow/tools/calculator";
import { FunctionCallingAgent } from "stepflow/workflows/function-calling-agent";

const dir = await mkdtemp(join(tmpdir(), "stepflow-sessions-"));
const url = `sqlite:${join(dir, "sessions.db")}`;
const newAgent = () => new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools });

try {
  const firstStore = await openSessionStore(url);
  const first = new Sessions(newAgent(), firstStore);
  console.log(String((await first.run("alice", { input: "Hello! My name is Alice." })).response.content));
  await firstStore.close();

  // Later, elsewhere: a new agent and a new connection continue the same conversation.
  const laterStore = await openSessionStore(url);
  const later = new Sessions(newAgent(), laterStore);
  console.log(String((await later.run("alice", { input: "What is my name?" })).response.content));

  for (const { message } of await later.messages("alice")) console.log(`  ${message.role}: ${String(message.content)}`);
  for (const session of await later.list()) console.log(`session ${session.id}: ${session.messageCount} messages, version ${session.version}`);
  await laterStore.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}

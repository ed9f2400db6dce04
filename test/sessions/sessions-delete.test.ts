/** `Sessions.delete` at a version: a session saved since it was read is kept, and the caller is told why. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OfflineDemoLLM } from "../../src/llm/offline-model.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { Sessions } from "../../src/sessions/sessions.ts";
import { SessionConflictError } from "../../src/sessions/types.ts";
import type { SessionStore } from "../../src/sessions/types.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { calculatorTools } from "../../workflows/tools/calculator.ts";

const stores: [string, () => string][] = [
  ["memory", () => "memory:"],
  ["SQLite", () => `sqlite:${join(mkdtempSync(join(tmpdir(), "stepflow-delete-")), "sessions.db")}`],
];
if (process.env.DATABASE_URL) stores.push(["PostgreSQL", () => process.env.DATABASE_URL as string]);

const opened: SessionStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});
// Ids unique per run, so that a shared PostgreSQL database needs no cleaning between runs.
const unique = (name: string) => `${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
const agent = () => new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools });

describe.each(stores)("Sessions.delete with expectedVersion: %s", (_name, url) => {
  it("refuses when another process saved the session between the read and the delete, and keeps it", async () => {
    const store = await openSessionStore(url());
    opened.push(store);
    const id = unique("alice");
    const here = new Sessions(agent(), store);
    const elsewhere = new Sessions(agent(), store);
    await here.run(id, { input: "Hello! My name is Logan." });
    const read = await here.messagePage(id, { page: 1 });
    expect(read.version).toBe(1);
    await elsewhere.run(id, { input: "What is 2 + 3?" }); // saved meanwhile: version 2

    const refused = here.delete(id, { expectedVersion: read.version });
    await expect(refused).rejects.toThrow(SessionConflictError);
    await expect(here.delete(id, { expectedVersion: read.version })).rejects.toThrow(
      `Session "${id}" was not deleted: another process saved it since it was read (expected version 1, found 2). Read it again, and delete it with expectedVersion: 2 if it should still go.`,
    );
    const kept = await here.messagePage(id, { page: 1 });
    expect({ version: kept.version, total: kept.total }).toEqual({ version: 2, total: read.total + 4 });

    expect(await here.delete(id, { expectedVersion: kept.version })).toBe(true);
    expect((await here.messagePage(id, { page: 1 })).total).toBe(0);
    // Gone: nothing to delete, at a version or not.
    expect(await here.delete(id, { expectedVersion: 2 })).toBe(false);
    expect(await here.delete(id)).toBe(false);
  });

  it("deletes whatever the version without expectedVersion", async () => {
    const store = await openSessionStore(url());
    opened.push(store);
    const id = unique("bob");
    const sessions = new Sessions(agent(), store);
    await sessions.run(id, { input: "Hello! My name is Bob." });
    await sessions.run(id, { input: "What is 2 + 3?" });
    expect(await sessions.delete(id)).toBe(true);
    expect((await sessions.messagePage(id, { page: 1 })).version).toBe(0);
  });
});

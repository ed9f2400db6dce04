/**
 * An event class with a `static schema` has the data a client sends for it checked before the
 * run takes it: a bad answer is refused with each problem named, and the run still waits for a
 * good one; a good one is built from the schema's output (defaults filled in).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowClient, WorkflowClientError } from "../../src/client/index.ts";
import { ConfigurationError, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context, FromOutside } from "../../src/index.ts";
import type { StreamedEvent } from "../../src/client/index.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";

class Question extends InputRequiredEvent<{ prefix: string }> {}

const answerSchema = z.object({ response: z.string().min(1) });
class Answer extends HumanResponseEvent<z.output<typeof answerSchema>> {
  static readonly schema = answerSchema;
}

const toneSchema = z.object({ response: z.string(), tone: z.enum(["polite", "blunt"]).default("polite") });
class TonedAnswer extends HumanResponseEvent<z.output<typeof toneSchema>> {
  static readonly schema = toneSchema;
}

class Unchecked extends HumanResponseEvent<{ response: string }> {}

class Approval extends Workflow<{ name: string }, string> {
  static override readonly fromOutside: FromOutside = { events: [Answer] };
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async fire(ctx: Context, ev: StartEvent<{ name: string }>) {
    const answer = await ctx.waitForEvent(Answer, { waiterEvent: new Question({ prefix: `Fire ${ev.name}?` }) });
    return new StopEvent({ result: answer.response === "yes" ? `${ev.name} fired` : `${ev.name} kept` });
  }
}

class TonedApproval extends Workflow<{ name: string }, string> {
  static override readonly fromOutside: FromOutside = { events: [TonedAnswer] };
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async fire(ctx: Context, ev: StartEvent<{ name: string }>) {
    const answer = await ctx.waitForEvent(TonedAnswer, { waiterEvent: new Question({ prefix: `Fire ${ev.name}?` }) });
    return new StopEvent({ result: `${answer.response}, said ${answer.tone}ly` });
  }
}

class UncheckedApproval extends Workflow<{ name: string }, string> {
  static override readonly fromOutside: FromOutside = { events: [Unchecked] };
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async fire(ctx: Context, ev: StartEvent<{ name: string }>) {
    const answer = await ctx.waitForEvent(Unchecked, { waiterEvent: new Question({ prefix: `Fire ${ev.name}?` }) });
    return new StopEvent({ result: `${ev.name}: ${String(answer.response)}` });
  }
}

async function askedRun(client: WorkflowClient, workflow: string): Promise<string> {
  const { id } = await client.start(workflow, { name: "Lawson" });
  for await (const ev of client.streamEvents(id)) if (ev.type === "Question") break;
  return id;
}

async function served(): Promise<{ client: WorkflowClient; server: WorkflowServer; url: string }> {
  const server = new WorkflowServer({
    workflows: {
      approval: new Approval({ timeout: null }),
      toned: new TonedApproval({ timeout: null }),
      unchecked: new UncheckedApproval({ timeout: null }),
    },
    store: "memory:",
  });
  const { url } = await server.listen({ port: 0 });
  return { server, url, client: new WorkflowClient({ baseUrl: url }) };
}

describe("an event class with a schema, sent by a client", () => {
  it("is refused with each problem named while the run still waits, then taken once it fits", async () => {
    const { server, client, url } = await served();
    try {
      const id = await askedRun(client, "approval");
      const refused = await client.sendEvent(id, "Answer", { reply: "yes" }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(WorkflowClientError);
      expect((refused as WorkflowClientError).status).toBe(400);
      expect((refused as WorkflowClientError).code).toBe("invalid_event");
      expect((refused as WorkflowClientError).message).toBe(
        "The Answer does not fit its schema: data.response: Invalid input: expected string, received undefined." +
          " Answer takes { response: string } (its JSON Schema is in GET /api/workflows).",
      );
      const empty = await client.sendEvent(id, "Answer", { response: "" }).catch((error: Error) => error.message);
      expect(empty).toContain("data.response: Too small: expected string to have >=1 characters");

      // Nothing was taken: the run still asks, and takes the answer that fits.
      expect((await client.getHandler(id)).waitingFor.map((w) => w.data.prefix)).toEqual(["Fire Lawson?"]);
      await client.sendEvent(id, "Answer", { response: "yes" });
      expect((await client.wait(id)).result).toBe("Lawson fired");
      // Only that answer is recorded as received.
      const { events } = (await (await fetch(`${url}/api/handlers/${id}/events?format=json`)).json()) as { events: StreamedEvent[] };
      expect(events.filter((ev) => ev.type === "EventReceivedEvent").map((ev) => ev.data)).toEqual([
        expect.objectContaining({ type: "Answer", data: { response: "yes" } }),
      ]);
    } finally {
      await server.close();
    }
  });

  it("is built from the schema's output: a default fills what the client left out", async () => {
    const { server, client } = await served();
    try {
      const id = await askedRun(client, "toned");
      await client.sendEvent(id, "TonedAnswer", { response: "yes" });
      expect((await client.wait(id)).result).toBe("yes, said politely");

      const blunt = await askedRun(client, "toned");
      const wrong = await client.sendEvent(blunt, "TonedAnswer", { response: "no", tone: "rude" }).catch((error: Error) => error.message);
      expect(wrong).toBe(
        'The TonedAnswer does not fit its schema: data.tone: Invalid option: expected one of "polite"|"blunt".' +
          " TonedAnswer takes { response: string, tone?: string } (its JSON Schema is in GET /api/workflows).",
      );
      await client.sendEvent(blunt, "TonedAnswer", { response: "no", tone: "blunt" });
      expect((await client.wait(blunt)).result).toBe("no, said bluntly");
    } finally {
      await server.close();
    }
  });

  it("is described in the workflow list by its schema", async () => {
    const { server, client } = await served();
    try {
      const approval = (await client.listWorkflows()).find((w) => w.name === "approval");
      expect(approval?.events.find((e) => e.type === "Answer")?.schema).toMatchObject({
        type: "object",
        properties: { response: { type: "string", minLength: 1 } },
        required: ["response"],
      });
    } finally {
      await server.close();
    }
  });
});

describe("an event class without a schema", () => {
  it("is taken as sent, as before", async () => {
    const { server, client } = await served();
    try {
      const id = await askedRun(client, "unchecked");
      await client.sendEvent(id, "Unchecked", { reply: "yes" });
      expect((await client.wait(id)).result).toBe("Lawson: undefined");
    } finally {
      await server.close();
    }
  });
});

describe("a schema the server is given for an event type (eventSchemas)", () => {
  it("checks that type's events as a class's own schema would", async () => {
    const server = new WorkflowServer({
      workflows: { unchecked: { workflow: new UncheckedApproval({ timeout: null }), eventSchemas: { Unchecked: answerSchema } } },
      store: "memory:",
    });
    const { url } = await server.listen({ port: 0 });
    const client = new WorkflowClient({ baseUrl: url });
    try {
      const id = await askedRun(client, "unchecked");
      const refused = await client.sendEvent(id, "Unchecked", { reply: "yes" }).catch((error: Error) => error.message);
      expect(refused).toContain("The Unchecked does not fit its schema: data.response: Invalid input: expected string, received undefined.");
      await client.sendEvent(id, "Unchecked", { response: "yes" });
      expect((await client.wait(id)).result).toBe("Lawson: yes");
    } finally {
      await server.close();
    }
  });
});

describe("a class whose schema is not one", () => {
  it("is refused when the server is made", () => {
    class Broken extends HumanResponseEvent<{ response: string }> {
      static readonly schema = { response: "string" };
    }
    class Asks extends Workflow {
      static override readonly fromOutside: FromOutside = { events: [Broken] };
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async go() {
        return new StopEvent();
      }
    }
    expect(() => new WorkflowServer({ workflows: { asks: new Asks() }, store: "memory:" })).toThrow(ConfigurationError);
    expect(() => new WorkflowServer({ workflows: { asks: new Asks() }, store: "memory:" })).toThrow(
      "Broken.schema must be a zod schema of the event's fields, e.g. static readonly schema = z.object({ response: z.string() }).",
    );
  });
});

/**
 * A `WorkflowClient` typed by the server's record of workflows (`WorkflowClient<typeof
 * workflows>`): the names it may run, each one's input, its result as the server sends it, and
 * the fields of an event sent into a run, checked by `npm run typecheck` (the `expectTypeOf`
 * lines and the `@ts-expect-error` ones, which an untyped client would not refuse); and the
 * same calls against a real server on 127.0.0.1, whose answers are what the types say.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { WorkflowClient } from "../../src/client/workflow-client.ts";
import type { HandlerInfo, JsonObject, JsonValue } from "../../src/client/types.ts";
import type { EventData, EventTypeName, RunInput, RunResult, Serialized } from "../../src/client/typed.ts";
import { HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context } from "../../src/index.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";
import type { ToolApprovalEvent } from "../../events/index.ts";
import type { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";

/** A person's answer to a refund: a class with a `typeName` of its own and a `Date` field. */
class RefundDecision extends HumanResponseEvent<{ approved: boolean; by: string; decidedAt: Date }> {
  static readonly typeName = "shop.RefundDecision";
}

interface RefundInput {
  orderId: string;
  cents: number;
}

interface Refunded {
  orderId: string;
  refunded: number;
  decidedAt: Date;
  note?: string | undefined;
}

/** Asks whether to refund the order, and refunds it (or not) when a `RefundDecision` comes. */
class Refund extends Workflow<RefundInput, Refunded> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async refund(ctx: Context, ev: StartEvent<RefundInput>) {
    const decision = await ctx.waitForEvent(RefundDecision, { waiterEvent: new InputRequiredEvent({ prefix: `Refund ${ev.cents} cents of ${ev.orderId}?` }) });
    // A Date, since the server reads the event's fields back with the workflow's codecs.
    if (!(decision.decidedAt instanceof Date)) throw new Error(`decidedAt arrived as ${typeof decision.decidedAt}`);
    return new StopEvent({ result: { orderId: ev.orderId, refunded: decision.approved ? ev.cents : 0, decidedAt: decision.decidedAt } });
  }
}

const double = new Workflow<{ n: number }, number>({ timeout: 10 });
double.addStep("double", { accepts: [StartEvent], emits: [StopEvent] }, async (_ctx, ev: StartEvent<{ n: number }>) => new StopEvent({ result: ev.n * 2 }));

/** The record the server is given, and the client's type argument. */
const workflows = {
  double,
  refund: { workflow: new Refund({ timeout: 30 }), description: "Refunds an order once a person agrees", events: [RefundDecision] },
};

/** What the server sends for the refund's result: its `Date` in the built-in codec's form, its optional field optional. */
interface RefundedOnTheWire {
  orderId: string;
  refunded: number;
  decidedAt: { readonly $codec: "Date"; readonly value: string };
  note?: string;
}

let server: WorkflowServer;
let client: WorkflowClient<typeof workflows>;

beforeAll(async () => {
  server = new WorkflowServer({ workflows, store: "memory:" });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  client = new WorkflowClient<typeof workflows>({ baseUrl: url });
});

afterAll(async () => {
  await server.close();
});

describe("a WorkflowClient typed by the server's workflows", () => {
  it("runs a workflow by name with its input, and gets its result typed", async () => {
    const done = await client.run("double", { n: 21 });
    expectTypeOf(done.result).toEqualTypeOf<number | undefined>();
    expectTypeOf(done.workflow).toEqualTypeOf<"double">();
    expect(done).toMatchObject({ workflow: "double", status: "succeeded", result: 42 });
  });

  it("sends a typed event into a run, and reads the result in its JSON form", async () => {
    const started = await client.start("refund", { orderId: "A-17", cents: 1250 });
    expectTypeOf(started.result).toEqualTypeOf<RefundedOnTheWire | undefined>();
    for await (const ev of client.streamEvents(started.id)) if (ev.type === "InputRequiredEvent") break;

    await client.sendEvent<typeof RefundDecision>(started.id, "shop.RefundDecision", {
      approved: true,
      by: "ada",
      decidedAt: { $codec: "Date", value: "2026-11-29T10:00:00.000Z" },
    });
    const done = await client.wait<"refund">(started.id);

    expect(done.status).toBe("succeeded");
    expect(done.result).toEqual({ orderId: "A-17", refunded: 1250, decidedAt: { $codec: "Date", value: "2026-11-29T10:00:00.000Z" } });
    expectTypeOf(done.result).toEqualTypeOf<RefundedOnTheWire | undefined>();
    // Typed without a cast: the line a user writes.
    const when: string | undefined = done.result?.decidedAt.value;
    expect(when).toBe("2026-11-29T10:00:00.000Z");
  });

  it("tells the handlers of different workflows apart by their workflow's name", async () => {
    const { id } = await client.run("double", { n: 4 });
    const info = await client.getHandler(id);
    expectTypeOf(info.result).toEqualTypeOf<number | RefundedOnTheWire | undefined>();
    if (info.workflow !== "double") throw new Error(`handler ${id} is of ${info.workflow}`);
    expectTypeOf(info.result).toEqualTypeOf<number | undefined>();
    expect(info.result).toBe(8);
    const listed = await client.listHandlers({ workflow: "double" });
    expectTypeOf(listed).toEqualTypeOf<HandlerInfo<number, "double">[]>();
    expect(listed.map((h) => h.result)).toContain(8);
  });

  it("still sends an event by any name and any JSON fields, which the server checks", async () => {
    const started = await client.start("refund", { orderId: "A-18", cents: 1 });
    for await (const ev of client.streamEvents(started.id)) if (ev.type === "InputRequiredEvent") break;
    await expect(client.sendEvent(started.id, "NotAnEvent", { anything: 1 })).rejects.toMatchObject({ status: 403 });
    await client.cancel(started.id);
  });
});

describe("the types of a typed client", () => {
  it("refuse unknown names, misfit inputs and misfit event fields (checked by npm run typecheck)", () => {
    // Never called: its lines are type checks only.
    function refused(typed: WorkflowClient<typeof workflows>, id: string): void {
      // @ts-expect-error: no workflow of that name
      void typed.run("refnd", { orderId: "A-1", cents: 1 });
      // @ts-expect-error: cents is a number
      void typed.run("refund", { orderId: "A-1", cents: "12.50" });
      // @ts-expect-error: the input lacks orderId
      void typed.start("refund", { cents: 1 });
      // @ts-expect-error: the double workflow takes { n }
      void typed.run("double", { input: "twenty-one" });
      // @ts-expect-error: the server knows the event by its typeName, not its class's name
      void typed.sendEvent<typeof RefundDecision>(id, "RefundDecision", { approved: true, by: "ada", decidedAt: { $codec: "Date", value: "" } });
      // @ts-expect-error: approved is a boolean
      void typed.sendEvent<typeof RefundDecision>(id, "shop.RefundDecision", { approved: "yes", by: "ada", decidedAt: { $codec: "Date", value: "" } });
      // @ts-expect-error: a Date field is sent in its JSON form, { $codec: "Date", value }
      void typed.sendEvent<typeof RefundDecision>(id, "shop.RefundDecision", { approved: true, by: "ada", decidedAt: new Date() });
      // @ts-expect-error: the listed handlers are of a workflow the server has
      void typed.listHandlers({ workflow: "refnd" });
    }
    expect(typeof refused).toBe("function");
  });

  it("type the agent's input, result and approval answer from their declarations", () => {
    type Agent = { agent: FunctionCallingAgent };
    expectTypeOf<RunInput<Agent, "agent">["input"]>().toEqualTypeOf<string | import("@llamaindex/core/llms").ChatMessage>();
    expectTypeOf<RunResult<Agent, "agent">["response"]["role"]>().toEqualTypeOf<import("@llamaindex/core/llms").MessageType>();
    // The agent's result has no `object` without a responseFormat: JSON leaves it out.
    expectTypeOf<RunResult<Agent, "agent">>().not.toHaveProperty("object");
    expectTypeOf<EventTypeName<typeof ToolApprovalEvent>>().toEqualTypeOf<"agent.ToolApprovalEvent">();
    expectTypeOf<EventData<typeof ToolApprovalEvent>>().toEqualTypeOf<{ readonly approvalId: string; readonly approved: boolean; readonly reason?: string }>();
  });

  it("give the JSON form of a declared type", () => {
    expectTypeOf<Serialized<{ a: number; at: Date; list: Date[]; maybe?: string | undefined; gone: undefined; fn: () => void }>>().toEqualTypeOf<{
      a: number;
      at: { readonly $codec: "Date"; readonly value: string };
      list: { readonly $codec: "Date"; readonly value: string }[];
      maybe?: string;
    }>();
    expectTypeOf<Serialized<unknown>>().toEqualTypeOf<JsonValue>();
    expectTypeOf<Serialized<string | null>>().toEqualTypeOf<string | null>();
  });

  it("leave an untyped client as it was: any name, JSON input, JsonValue result, any event", () => {
    const untyped = new WorkflowClient({ baseUrl: "http://127.0.0.1:9" });
    expectTypeOf(untyped.run).parameter(0).toEqualTypeOf<string>();
    expectTypeOf(untyped.run<"agent">)
      .parameter(1)
      .toEqualTypeOf<JsonObject | undefined>();
    expectTypeOf(untyped.run<"agent">).returns.resolves.toEqualTypeOf<HandlerInfo>();
    expectTypeOf(untyped.getHandler).returns.resolves.toEqualTypeOf<HandlerInfo>();
    expectTypeOf<HandlerInfo["result"]>().toEqualTypeOf<JsonValue | undefined>();
    expectTypeOf(untyped.sendEvent).toBeCallableWith("id", "HumanResponseEvent", { response: "yes" });
  });
});

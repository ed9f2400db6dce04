/**
 * A mid-run context a client sends puts its events into the run: on a server that takes such
 * contexts (acceptMidRunContexts), each event whose type has a schema is checked against it as
 * an event sent in is, before anything starts; one that fits is built from the schema's output.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowClient } from "../../src/client/index.ts";
import type { JsonObject } from "../../src/client/index.ts";
import { Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context } from "../../src/index.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";

const orderSchema = z.object({ item: z.string().min(1), qty: z.number().int().positive(), gift: z.boolean().default(false) });
class Order extends Event<z.output<typeof orderSchema>> {
  static readonly schema = orderSchema;
}
class Question extends InputRequiredEvent<{ prefix: string }> {}

/** Takes an order, then asks before it ships it. */
class Shop extends Workflow<{ item: string; qty: number }, string> {
  @step({ accepts: [StartEvent], emits: [Order] })
  async take(_ctx: Context, ev: StartEvent<{ item: string; qty: number }>) {
    return new Order({ item: ev.item, qty: ev.qty, gift: false });
  }

  @step({ accepts: [Order], emits: [StopEvent] })
  async ship(ctx: Context, ev: Order) {
    const answer = await ctx.waitForEvent(HumanResponseEvent, { waiterEvent: new Question({ prefix: `Ship ${ev.qty} ${ev.item}?` }) });
    return new StopEvent({
      result: `${ev.qty} ${ev.item}, gift: ${String(ev.gift)}, ${Object.keys(ev).join(" ")}: ${String((answer as { response?: unknown }).response)}`,
    });
  }
}

const inputSchema = z.object({ item: z.string().min(1), qty: z.number().int().positive() });
const bulkOrder = orderSchema.extend({ qty: z.number().int().min(100) });

let server: WorkflowServer;
let client: WorkflowClient;
let url: string;

beforeAll(async () => {
  server = new WorkflowServer({
    acceptMidRunContexts: true,
    store: "memory:",
    workflows: {
      shop: { workflow: new Shop({ timeout: null }), inputSchema },
      bulk: { workflow: new Shop({ timeout: null }), eventSchemas: { Order: bulkOrder } },
    },
  });
  ({ url } = await server.listen({ port: 0 }));
  client = new WorkflowClient({ baseUrl: url });
});
afterAll(async () => {
  await server.close();
});

interface SavedShop {
  run: {
    inFlight: Record<string, { type: string; data: Record<string, unknown> }[]>;
    queued: Record<string, { type: string; data: Record<string, unknown> }[]>;
  };
}

/** The context of a shop run that waits to ship 2 teas, taken mid-run (the run is then cancelled). */
async function waitingToShip(): Promise<SavedShop & JsonObject> {
  const { id } = await client.start("shop", { item: "tea", qty: 2 });
  for await (const ev of client.streamEvents(id)) if (ev.type === "Question") break;
  const context = (await client.getContext(id)) as SavedShop & JsonObject;
  await client.cancel(id);
  expect(context.run.inFlight.ship).toEqual([expect.objectContaining({ type: "Order", data: { item: "tea", qty: 2, gift: false } })]);
  return context;
}

/** Starts `workflow` from `context` with a plain fetch: the status and error of the answer. */
async function startFrom(workflow: string, context: unknown): Promise<{ status: number; code?: string; message?: string; id?: string }> {
  const response = await fetch(`${url}/api/workflows/${workflow}/start`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ context }),
  });
  const body = (await response.json()) as { id?: string; error?: { code: string; message: string } };
  return { status: response.status, ...(body.error ?? {}), ...(body.id !== undefined ? { id: body.id } : {}) };
}

const handlerCount = async () => (await client.listHandlers()).length;

describe("an event in a mid-run context a client sends", () => {
  it("that does not fit its class's schema is refused with 400 invalid_context naming it, where it sits and each problem; nothing starts", async () => {
    const context = await waitingToShip();
    const [shipping] = context.run.inFlight.ship ?? [];
    Object.assign(shipping?.data ?? {}, { item: "", qty: -5 });
    context.run.queued.ship = [{ type: "Order", data: { item: "cake", qty: 1.5 } }];
    const before = await handlerCount();

    expect(await startFrom("shop", context)).toEqual({
      status: 400,
      code: "invalid_context",
      message:
        "The context holds 2 events that do not fit their schemas (as POST /api/handlers/:id/events would refuse them):" +
        ' The Order at run.queued["ship"][0] does not fit its schema: data.qty: Invalid input: expected int, received number.' +
        " Order takes { item: string, qty: integer, gift?: boolean } (its JSON Schema is in GET /api/workflows)." +
        ' The Order at run.inFlight["ship"][0] does not fit its schema: data.item: Too small: expected string to have >=1 characters;' +
        " data.qty: Too small: expected number to be >0." +
        " Order takes { item: string, qty: integer, gift?: boolean } (its JSON Schema is in GET /api/workflows)." +
        " Nothing was started. Correct the data in the context, or start a new run with input instead.",
    });
    expect(await handlerCount()).toBe(before);
  });

  it("that fits is built from the schema's output, as an event sent in is: defaults filled, unknown keys dropped", async () => {
    const context = await waitingToShip();
    const [shipping] = context.run.inFlight.ship ?? [];
    if (shipping) shipping.data = { item: "tea", qty: 3, discount: 99 };
    const { status, id } = await startFrom("shop", context);
    expect(status).toBe(202);
    for await (const ev of client.streamEvents(String(id))) if (ev.type === "Question") break;
    await client.sendEvent(String(id), "HumanResponseEvent", { response: "yes" });
    expect((await client.wait(String(id))).result).toBe("3 tea, gift: false, item qty gift: yes");
  });

  it("is checked against the served workflow's eventSchemas for its type, in place of its class's", async () => {
    const context = await waitingToShip();
    expect(await startFrom("bulk", context)).toMatchObject({
      status: 400,
      code: "invalid_context",
      message: expect.stringContaining(
        'The Order at run.inFlight["ship"][0] does not fit its schema: data.qty: Too small: expected number to be >=100.' +
          " Order takes { item: string, qty: integer, gift?: boolean }",
      ) as unknown,
    });
  });

  it("that is the run's StartEvent is checked against the served inputSchema, as a run's input is", async () => {
    const before = await handlerCount();
    const context = {
      version: 3,
      workflow: "Shop",
      store: {},
      running: true,
      run: { queued: { take: [{ type: "StartEvent", data: { item: "tea", qty: 0 } }] }, inFlight: {}, collected: {}, unclaimed: [], waiters: [] },
    };
    expect(await startFrom("shop", context)).toEqual({
      status: 400,
      code: "invalid_context",
      message:
        "The context holds an event that does not fit its schema (as POST /api/handlers/:id/events would refuse it):" +
        ' The StartEvent at run.queued["take"][0] does not fit its schema: data.qty: Too small: expected number to be >0.' +
        " StartEvent takes { item: string, qty: integer } (its JSON Schema is in GET /api/workflows)." +
        " Nothing was started. Correct the data in the context, or start a new run with input instead.",
    });
    expect(await handlerCount()).toBe(before);
  });
});

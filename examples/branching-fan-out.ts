// Fan-out and branching: an order is checked against three warehouses at once, the answers
// are gathered with ctx.collectEvents, and the workflow branches on the total in stock.
import { Event, StartEvent, StopEvent, Workflow, step, type Context } from "stepflow";

const STOCK: Record<string, number> = { Berlin: 2, Lyon: 0, Porto: 3 };

class CheckStock extends Event<{ warehouse: string; item: string }> {}
class StockLevel extends Event<{ warehouse: string; count: number }> {}
class Ship extends Event<{ from: string[] }> {}
class Backorder extends Event<{ missing: number }> {}

type Order = { item: string; quantity: number };

class OrderFlow extends Workflow<Order, string> {
  @step({ accepts: [StartEvent], emits: [CheckStock] })
  async fanOut(ctx: Context, ev: StartEvent<Order>) {
    await ctx.store.set("quantity", ev.quantity);
    for (const warehouse of Object.keys(STOCK)) ctx.sendEvent(new CheckStock({ warehouse, item: ev.item }));
  }

  // Three executions at once: each warehouse is asked in parallel.
  @step({ accepts: [CheckStock], emits: [StockLevel], numWorkers: 3 })
  async check(_ctx: Context, ev: CheckStock) {
    return new StockLevel({ warehouse: ev.warehouse, count: STOCK[ev.warehouse] ?? 0 });
  }

  @step({ accepts: [StockLevel], emits: [Ship, Backorder] })
  async gather(ctx: Context, ev: StockLevel) {
    // null until all three answers arrived; then the three, and this step decides once.
    const levels = ctx.collectEvents(ev, [StockLevel, StockLevel, StockLevel]);
    if (!levels) return;
    const quantity = await ctx.store.get<number>("quantity");
    const inStock = levels.reduce((sum, level) => sum + level.count, 0);
    if (inStock < quantity) return new Backorder({ missing: quantity - inStock });
    const from = levels
      .filter((level) => level.count > 0)
      .map((level) => level.warehouse)
      .sort();
    return new Ship({ from });
  }

  @step({ accepts: [Ship], emits: [StopEvent] })
  async ship(_ctx: Context, ev: Ship) {
    return new StopEvent({ result: `ship from ${ev.from.join(" and ")}` });
  }

  @step({ accepts: [Backorder], emits: [StopEvent] })
  async backorder(_ctx: Context, ev: Backorder) {
    return new StopEvent({ result: `backorder: ${ev.missing} missing` });
  }
}

const flow = new OrderFlow({ timeout: 10 });
console.log("4 lamps:", await flow.run({ item: "lamp", quantity: 4 }));
console.log("9 lamps:", await flow.run({ item: "lamp", quantity: 9 }));

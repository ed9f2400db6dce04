/**
 * What tracing costs: the engine's ping-pong and offline agent turns with no observer (the
 * default), with `instrumentStepflow()` but no tracer provider registered (OpenTelemetry's no-op
 * tracer), and with a real SDK provider recording every span into memory.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { type Context, Event, StartEvent, StopEvent, Workflow, step } from "../src/index.ts";
import { instrumentStepflow } from "../src/otel/index.ts";
import { OfflineDemoLLM } from "../src/llm/offline-model.ts";
import { FunctionCallingAgent } from "../workflows/function-calling-agent.ts";
import { calculatorTools } from "../workflows/tools/calculator.ts";
import { measure, perEventMicros, printTable } from "./measure.ts";

class Ping extends Event<{ n: number }> {}

class Loop extends Workflow<{ steps: number }, number> {
  @step({ accepts: [StartEvent, Ping], emits: [Ping, StopEvent] })
  async next(_ctx: Context, ev: StartEvent<{ steps: number }> | Ping) {
    const n = ev instanceof Ping ? ev.n : 0;
    return n >= (this as Loop).limit ? new StopEvent({ result: n }) : new Ping({ n: n + 1 });
  }

  constructor(readonly limit: number) {
    super({ timeout: null });
  }
}

/** Runs the three set-ups for `steps` step executions and `turns` agent turns; prints one table. */
export async function benchOtel(steps = 100_000, turns = 300): Promise<void> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const setups: { name: string; start: () => () => void }[] = [
    { name: "no observer (default)", start: () => () => {} },
    { name: "instrumentStepflow(), no provider (no-op spans)", start: () => instrumentStepflow() },
    { name: "instrumentStepflow() + SDK provider, in-memory exporter", start: () => instrumentStepflow({ tracerProvider: provider }) },
  ];
  const rows: (string | number)[][] = [];
  for (const setup of setups) {
    const stop = setup.start();
    try {
      await new Loop(1000).run({ steps: 1000 }); // warm-up
      const engine = await measure(setup.name, steps, async () => await new Loop(steps).run({ steps }));
      exporter.reset();
      const agent = new FunctionCallingAgent({ llm: new OfflineDemoLLM(), tools: calculatorTools, timeout: null });
      await agent.run({ input: "What is (2123 + 2321) * 312?" }); // warm-up
      const turnsRun = await measure(setup.name, turns, async () => {
        for (let i = 0; i < turns; i++) await agent.run({ input: "What is (2123 + 2321) * 312?" });
      });
      const spans = exporter.getFinishedSpans().length;
      exporter.reset();
      rows.push([setup.name, perEventMicros(engine).toFixed(2), (turnsRun.ms / turns).toFixed(3), spans === 0 ? "0" : (spans / turns).toFixed(0)]);
    } finally {
      stop();
    }
  }
  printTable(["set-up", "engine µs / step execution", "agent ms / turn (offline model, 3 LLM + 2 tool calls)", "spans / turn"], rows);
}

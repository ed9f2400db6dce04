/**
 * `stepflow/otel`: OpenTelemetry traces of stepflow runs. One span per run, a child span per
 * step attempt, and under those a span per LLM call and per tool call, named and attributed
 * after the OpenTelemetry GenAI semantic conventions (`invoke_workflow`, `chat {model}`,
 * `execute_tool {name}`; `gen_ai.request.model`, `gen_ai.usage.input_tokens`,
 * `gen_ai.tool.name`, …). It goes through `@opentelemetry/api` only: spans go wherever the
 * application's tracer provider sends them, and nowhere (no-op) when it registers none.
 *
 * Messages, tool arguments and tool results are not recorded: they may hold personal data
 * or secrets, as the conventions warn.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { SpanKind, SpanStatusCode, context, isSpanContextValid, trace } from "@opentelemetry/api";
import type { Attributes, Span, Tracer, TracerProvider } from "@opentelemetry/api";
import { sharedRunObservers } from "../core/internal.ts";
import type { ObservedAttributes, OperationObservation, RunObservation, RunObserver, RunObservers, StepObservation } from "../core/internal.ts";

/** Options of {@link instrumentStepflow}. @example `{ tracerProvider: provider }` */
export interface StepflowInstrumentationOptions {
  /** Where the spans go. Default: the provider the application registered globally (`trace.getTracerProvider()`). */
  readonly tracerProvider?: TracerProvider;
  /**
   * Whose runs are traced: the workflows given this set (`new MyWorkflow({ observers })`).
   * Default: every workflow given no set of its own (`sharedRunObservers`).
   */
  readonly observers?: RunObservers;
}

const SCOPE = "stepflow";

/**
 * Traces every stepflow run from now on, in this process; returns the function that stops it.
 * Call it once, after registering a tracer provider (the OpenTelemetry Node SDK, or a
 * `NodeTracerProvider` with an OTLP exporter for Jaeger or Arize Phoenix).
 * @example
 * import { NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
 * import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
 * import { instrumentStepflow } from "stepflow/otel";
 *
 * const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: "http://localhost:4318/v1/traces" }))] });
 * provider.register();
 * const stop = instrumentStepflow();
 * await agent.run({ input: "What is (2123 + 2321) * 312?" }); // a trace: invoke_workflow → steps → chat / execute_tool
 */
export function instrumentStepflow(options: StepflowInstrumentationOptions = {}): () => void {
  return (options.observers ?? sharedRunObservers).add(new OpenTelemetryObserver(options.tracerProvider));
}

/**
 * The spans of step attempts under way, for the LLM and tool calls they make: found through
 * this module's own async context, so that they nest under their step whether or not the
 * application registered an OpenTelemetry context manager.
 */
const currentStep = new AsyncLocalStorage<Span>();

class OpenTelemetryObserver implements RunObserver {
  readonly #provider: TracerProvider | undefined;
  #tracer: Tracer | undefined;

  constructor(provider: TracerProvider | undefined) {
    this.#provider = provider;
  }

  /** Asked at each span: a provider registered after `instrumentStepflow()` is still used. */
  get tracer(): Tracer {
    if (this.#provider) return (this.#tracer ??= this.#provider.getTracer(SCOPE));
    return trace.getTracer(SCOPE);
  }

  runStarted(run: { runId: string; workflow: string; resumed: boolean }): RunObservation | undefined {
    const span = this.tracer.startSpan(`invoke_workflow ${run.workflow}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        "gen_ai.operation.name": "invoke_workflow",
        "gen_ai.workflow.name": run.workflow,
        "stepflow.run.id": run.runId,
        "stepflow.run.resumed": run.resumed,
      },
    });
    // No tracer provider registered: OpenTelemetry's no-op span. Following the steps would cost
    // an async context per step execution for spans that go nowhere.
    if (!isSpanContextValid(span.spanContext())) return undefined;
    const parent = trace.setSpan(context.active(), span);
    const open = new Set<Span>();
    const tracer = this.tracer;
    return {
      stepStarted: (step): StepObservation => {
        const stepSpan = tracer.startSpan(
          `step ${step.step}`,
          {
            kind: SpanKind.INTERNAL,
            attributes: {
              "stepflow.step.name": step.step,
              "stepflow.step.attempt": step.attempt,
              "stepflow.step.input_event": step.inputEvent,
              "stepflow.run.id": step.runId,
            },
          },
          parent,
        );
        open.add(stepSpan);
        return {
          run: (work) => currentStep.run(stepSpan, () => context.with(trace.setSpan(parent, stepSpan), work)),
          ended: (outcome) => {
            if (!open.delete(stepSpan)) return;
            if (outcome.ok) {
              if (outcome.outputEvent) stepSpan.setAttribute("stepflow.step.output_event", outcome.outputEvent);
            } else {
              stepSpan.setAttribute("stepflow.step.will_retry", outcome.willRetry);
              fail(stepSpan, outcome.error);
            }
            stepSpan.end();
          },
        };
      },
      // A run waiting for input (a human's answer) says when it began to wait: the gap before its next step is not slowness.
      idle: () => span.addEvent("stepflow.run.idle"),
      runEnded: (end) => {
        // Steps still executing when the run ended (it finished, failed or timed out meanwhile) end with it.
        for (const stepSpan of open) {
          stepSpan.setAttribute("stepflow.step.cut_short", true);
          stepSpan.end();
        }
        open.clear();
        span.setAttribute("stepflow.run.status", end.status);
        if (end.status !== "succeeded") fail(span, end.error, end.status);
        span.end();
      },
    };
  }

  operationStarted(operation: { kind: "llm" | "tool"; name: string; attributes: ObservedAttributes }): OperationObservation {
    const step = currentStep.getStore();
    const span = this.tracer.startSpan(
      operation.name,
      // An LLM call leaves the process (CLIENT, as the conventions say); a tool runs in it.
      { kind: operation.kind === "llm" ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes: attributes(operation.attributes) },
      step ? trace.setSpan(context.active(), step) : context.active(),
    );
    let ended = false;
    return {
      end: (more, error) => {
        if (ended) return;
        ended = true;
        if (more) span.setAttributes(attributes(more));
        if (error !== undefined) fail(span, error);
        span.end();
      },
    };
  }
}

/** Attributes without the unknown ones (OpenTelemetry drops `undefined` values, with a warning). */
function attributes(values: ObservedAttributes): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue;
    out[key] = typeof value === "object" ? [...value] : value;
  }
  return out;
}

function fail(span: Span, error: unknown, fallback = "error"): void {
  const type = error instanceof Error ? error.name : fallback;
  span.setAttribute("error.type", type);
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : error === undefined ? fallback : String(error) });
}

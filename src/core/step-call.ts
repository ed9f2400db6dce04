/**
 * Calling a step's handler with its resources and under its timeout, when it has them (a
 * step with neither is called directly by the driver: this is the slower path).
 */
import type { Context } from "./context.ts";
import type { Event } from "./event.ts";
import { WorkflowTimeoutError } from "./errors.ts";
import { resolveResources } from "./resource.ts";
import type { Resource } from "./resource.ts";
import type { StepDefinition } from "./step.ts";
import { startTimer } from "./timers.ts";
import { beginAttempt, retireView } from "./context-engine.ts";

/** What a step call needs of its run: the run's resource values, the workflow's, and the run's timers (cleared when it ends). */
export interface StepCallScope {
  readonly resources: Map<Resource<unknown>, Promise<unknown>>;
  readonly resourceCache: Map<Resource<unknown>, Promise<unknown>>;
  readonly timers: Set<() => void>;
}

/** The resources of a step that has none: one frozen object for all. */
export const NO_RESOURCES: Record<string, unknown> = Object.freeze({});

/**
 * Calls `step`'s handler with its resources, failing with `WorkflowTimeoutError` past its timeout.
 * @example const output = await callStep(step, ctx, event, { resources: new Map(), resourceCache: graph.resourceCache, timers: new Set() });
 */
export async function callStep(step: StepDefinition, ctx: Context, event: Event, scope: StepCallScope): Promise<unknown> {
  if (step.resources === undefined && step.timeout === null) return step.handler(ctx, event, NO_RESOURCES);
  const resources = step.resources ? await resolveResources(step.resources, scope.resources, scope.resourceCache) : NO_RESOURCES;
  return step.timeout === null ? step.handler(ctx, event, resources) : withStepTimeout(step, ctx, event, resources, scope.timers);
}

function withStepTimeout(step: StepDefinition, ctx: Context, event: Event, resources: Record<string, unknown>, timers: Set<() => void>): Promise<unknown> {
  const seconds = step.timeout as number;
  const attempt = ctx[beginAttempt]();
  return new Promise((resolve, reject) => {
    const cancel = startTimer(seconds, () => {
      timers.delete(cancel);
      // The handler runs on: what it sends, streams, collects, waits for or writes to the store from now on must not reach the run, which retries it, recovers or fails.
      ctx[retireView](
        `this attempt of step "${step.name}" timed out after ${seconds} seconds, and the run goes on without it: what it sends, streams, collects, waits for or writes to the store is refused. Give the step a longer timeout if its work takes longer.`,
      );
      const error = new WorkflowTimeoutError(`Step "${step.name}" timed out after ${seconds} seconds.`, [step.name]);
      // After the view is retired: abort listeners run now, and what they do through ctx is refused too.
      attempt.timedOut(error);
      reject(error);
    });
    timers.add(cancel);
    const settle = () => {
      cancel();
      timers.delete(cancel);
      attempt.ended();
    };
    // new Promise(...) turns a handler that throws synchronously into a rejection.
    new Promise((run) => run(step.handler(ctx, event, resources))).then(
      (output) => (settle(), resolve(output)),
      (error: unknown) => (settle(), reject(error)),
    );
  });
}

/**
 * What `ctx.once` needs of one execution of a run (see step-once.ts): its records, the journal
 * key of a name, whether another attempt at the run could know that key, and whether the run ended.
 */
import type { Journal } from "./journal/types.ts";
import type { Codecs } from "./serialize.ts";
import { OnceRecords } from "./once-records.ts";
import type { OnceScope } from "./step-once.ts";
import { savedIdOf } from "./run-state.ts";
import type { RunState, StepExecution } from "./run-state.ts";

/** What the scope asks of the run. */
export interface OnceRun {
  readonly state: RunState;
  onceKey(execution: StepExecution, name: string): string;
  endedBecause(): { readonly reason: unknown } | undefined;
}

/**
 * @example return runOnce(new ExecutionOnceScope(run, execution, journal), name, work, options);
 */
/** A class, so that a `ctx.once` call makes one small object and no closures. */
export class ExecutionOnceScope implements OnceScope {
  readonly records: OnceRecords;
  readonly codecs: Codecs;

  constructor(
    readonly run: OnceRun,
    readonly execution: StepExecution,
    readonly journal: Journal,
  ) {
    this.records = execution.once ??= new OnceRecords();
    this.codecs = run.state.codecs;
  }

  key(name: string): string {
    return this.run.onceKey(this.execution, name);
  }

  shared(): boolean {
    return savedIdOf(this.execution) !== undefined;
  }

  ended(): { readonly reason: unknown } | undefined {
    return this.run.endedBecause();
  }
}

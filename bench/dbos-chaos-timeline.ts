/**
 * Where the chaos test's time goes (`dbos-chaos.ts`): a timeline sampled every half second while
 * the faults run, and the time lost beyond the outages split by what the runs waited for; and a
 * tally of the processes' logs (DBOS prints a stack trace for each query that meets a database
 * that is away), so that stdout has their count, the logs themselves a file each.
 */

/** One look at the system. */
export interface Sample {
  /** Seconds since the phase started. */
  readonly at: number;
  /** PostgreSQL is up (as the script left it: stopped, or started again). */
  readonly up: boolean;
  /** Runs whose result the script has. */
  readonly completed: number;
  /** Worker processes up ("ready"), and starting (spawned, or about to be). */
  readonly ready: number;
  readonly starting: number;
  /** The checkpoints written (the sum of the runs' checkpoint numbers, which the runs' ends count too): they grow while runs progress; undefined when the database did not answer. */
  readonly steps: number | undefined;
  /** Runs left on a worker that is gone: whose id starts again (they wait for its start), and the others (they wait for a takeover). */
  readonly waitingForStart: number;
  readonly waitingForTakeover: number;
}

/** Seconds of the faults phase, by what was lost to what. */
export interface Breakdown {
  /** PostgreSQL down. */
  readonly outage: number;
  /** PostgreSQL up, and no worker up (every one killed, and starting again). */
  readonly noWorker: number;
  /** PostgreSQL up again, workers up, and no step recorded yet: retry backoffs, reconnections. */
  readonly resuming: number;
  /** Runs waiting for their worker (killed) to start again under its id. */
  readonly workerStarts: number;
  /** Runs waiting for a live worker to take their dead worker over. */
  readonly takeovers: number;
  /** Fewer workers up than the baseline had (killed ones starting again): fewer slots for the runs that could go on. */
  readonly fewerWorkers: number;
  /** For each outage: when PostgreSQL was back, and how long until the first step recorded and the first run completed after it. */
  readonly returns: readonly { readonly at: number; readonly firstStep: number | undefined; readonly firstRun: number | undefined }[];
}

/** The samples of one phase. */
export class Timeline {
  readonly samples: Sample[] = [];

  add(sample: Sample): void {
    this.samples.push(sample);
  }

  /**
   * The phase's seconds until `runs` had completed, lost by cause. Each half second with the
   * database up counts, as lost, the share of the work the baseline would have had under way
   * then (`min(runs left, slots)`) that could not be: runs left on a gone worker (waiting for
   * its start or a takeover), then runs that could go on but found no slot (fewer workers up).
   * An estimate: it assumes every run takes a slot for the same time.
   */
  breakdown(runs: number, workers: number, slotsPerWorker: number): Breakdown {
    const b = { outage: 0, noWorker: 0, resuming: 0, workerStarts: 0, takeovers: 0, fewerWorkers: 0 };
    const returns: { at: number; firstStep: number | undefined; firstRun: number | undefined }[] = [];
    let stepsBefore: number | undefined;
    let completedBefore = 0;
    let resuming = false;
    for (let i = 0; i + 1 < this.samples.length; i++) {
      const s = this.samples[i] as Sample;
      const dt = (this.samples[i + 1] as Sample).at - s.at;
      if (s.completed >= runs) break;
      if (!s.up) {
        b.outage += dt;
        if (i === 0 || (this.samples[i - 1] as Sample).up) returns.push({ at: NaN, firstStep: undefined, firstRun: undefined });
        resuming = true;
        continue;
      }
      const back = resuming ? (returns.at(-1) as (typeof returns)[number]) : undefined;
      if (back) {
        if (Number.isNaN(back.at)) back.at = s.at;
        if (back.firstRun === undefined && s.completed > completedBefore) back.firstRun = s.at - back.at;
        const stepped = s.steps !== undefined && stepsBefore !== undefined && s.steps > stepsBefore;
        if (stepped && back.firstStep === undefined) back.firstStep = s.at - back.at;
        if (back.firstRun !== undefined) resuming = false;
      } else {
        completedBefore = s.completed;
        if (s.steps !== undefined) stepsBefore = s.steps;
      }
      if (s.ready === 0) {
        // No worker up at all: whatever else holds, nothing can go on before one has started.
        b.noWorker += dt;
        continue;
      }
      if (back && back.firstStep === undefined && back.firstRun === undefined) {
        b.resuming += dt;
        continue;
      }
      const left = runs - s.completed;
      const stranded = Math.min(left, s.waitingForStart + s.waitingForTakeover);
      const busy = Math.min(left, workers * slotsPerWorker); // what the baseline would have under way
      const couldGo = Math.min(left - stranded, workers * slotsPerWorker);
      const went = Math.min(left - stranded, s.ready * slotsPerWorker);
      if (busy <= 0) continue;
      const strandedShare = (dt * (busy - couldGo)) / busy;
      if (stranded > 0) {
        b.workerStarts += (strandedShare * Math.min(s.waitingForStart, stranded)) / (s.waitingForStart + s.waitingForTakeover);
        b.takeovers += (strandedShare * Math.min(s.waitingForTakeover, stranded)) / (s.waitingForStart + s.waitingForTakeover);
      }
      b.fewerWorkers += (dt * (couldGo - went)) / busy;
    }
    return { ...b, returns };
  }

  /** One line every `every` seconds: time, runs completed, workers up (+ starting), PostgreSQL, runs waiting for a start / a takeover. */
  rows(every: number): string[] {
    const rows: string[] = [];
    let next = 0;
    for (const s of this.samples) {
      if (s.at < next) continue;
      next = s.at + every - 0.25;
      rows.push(
        `${s.at.toFixed(0).padStart(5)} s  ${String(s.completed).padStart(4)} done  workers ${s.ready}${s.starting > 0 ? `+${s.starting}` : "  "}  ${s.up ? "db up  " : "DB DOWN"}  waiting: ${s.waitingForStart} for a start, ${s.waitingForTakeover} for a takeover`,
      );
    }
    return rows;
  }

  /** Every sample, tab-separated, with a header line. */
  tsv(): string {
    const head = "at\tup\tcompleted\tready\tstarting\tsteps\twaitingForStart\twaitingForTakeover";
    return [
      head,
      ...this.samples.map((s) =>
        [s.at.toFixed(2), s.up ? 1 : 0, s.completed, s.ready, s.starting, s.steps ?? "", s.waitingForStart, s.waitingForTakeover].join("\t"),
      ),
    ].join("\n");
  }
}

/** The lines of the breakdown, for the summary. */
export function breakdown(b: Breakdown, faultsSec: number, baselineSec: number): string[] {
  const lost = faultsSec - baselineSec - b.outage;
  const named = b.noWorker + b.resuming + b.workerStarts + b.takeovers + b.fewerWorkers;
  const f = (x: number) => `${x.toFixed(1)} s`;
  return [
    `time lost beyond the outages: ${f(lost)} (${f(faultsSec)} with faults − ${f(baselineSec)} without − ${f(b.outage)} of PostgreSQL down), of which (estimated from the timeline):`,
    `  worker starts ${f(b.noWorker + b.workerStarts + b.fewerWorkers)} (no worker up at all ${f(b.noWorker)}, runs waiting for their killed worker to start again ${f(b.workerStarts)}, fewer workers up ${f(b.fewerWorkers)})`,
    `  takeovers ${f(b.takeovers)} (runs waiting for a live worker to take their dead one over)`,
    `  retry backoff ${f(b.resuming)} (PostgreSQL back, workers up, no step recorded yet)`,
    `  the rest ${f(lost - named)} (runs re-run from their checkpoints, recovery, the timeline's half-second grain)`,
    ...b.returns.map(
      (r) =>
        `  PostgreSQL back at ${f(r.at)}: first step recorded ${r.firstStep === undefined ? "-" : `within ${f(r.firstStep)}`}, first run completed ${r.firstRun === undefined ? "-" : `within ${f(r.firstRun)}`}`,
    ),
  ];
}

/** Counts log lines: stack traces, and entries by kind (numbers, ids and addresses left out). */
export class LogTally {
  lines = 0;
  traces = 0;
  readonly kinds = new Map<string, number>();

  /** A feed of one stream's output (a process's stdout, say): its lines whole across chunks. */
  stream(): (chunk: string) => void {
    let carry = "";
    const state = { inTrace: false };
    return (chunk) => {
      const lines = (carry + chunk).split("\n");
      carry = lines.pop() ?? "";
      for (const line of lines) this.#line(line, state);
    };
  }

  #line(line: string, state: { inTrace: boolean }): void {
    if (line.trim() === "") return;
    this.lines++;
    if (/^\s+at /.test(line)) {
      if (!state.inTrace) this.traces++;
      state.inTrace = true;
      return;
    }
    state.inTrace = false;
    if (/^(ready|took over|lost lease)/.test(line) || /^\s/.test(line) || /^[{}[\]]/.test(line)) return;
    const kind = line
      .replace(/^\S+Z\s+/, "")
      .replace(/[0-9a-f]{8}-[0-9a-f-]{27,}/g, "…")
      .replace(/\d+(\.\d+)?/g, "N")
      .slice(0, 110);
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
  }

  /** The count, and the `top` most frequent kinds. */
  summary(top: number): string[] {
    const kinds = [...this.kinds].sort((a, b) => b[1] - a[1]);
    return [
      `${this.lines} lines, ${this.traces} stack traces, ${kinds.reduce((n, [, c]) => n + c, 0)} entries of ${kinds.length} kinds; the most frequent:`,
      ...kinds.slice(0, top).map(([kind, n]) => `  ${String(n).padStart(5)} × ${kind}`),
    ];
  }
}

/**
 * Loads of many sessions asked for at once, read by one statement: a thousand new sessions
 * starting together cost a thousand statements (each parsed, run and answered on its own, a
 * round trip each on PostgreSQL) when a few reading a hundred sessions each read the same rows.
 * A store gives the statement; this collects the loads asked for in one turn of the event loop.
 */

/** Reads the rows of the sessions `ids` (those that exist), each with its newest `newest` messages, in one statement. */
export type ReadSessions<Row> = (ids: readonly string[], newest: number) => Promise<ReadonlyMap<string, Row>>;

/** Sessions read by one statement at most: the statement's text and its answer stay small. */
const MAX_PER_STATEMENT = 100;

/**
 * Callers answered per turn of the event loop: each starts its session's turn, and a hundred
 * started in one stretch would hold up every timer and request meanwhile.
 */
const ANSWERS_PER_TURN = 16;

/** Answers the callers of `chunk` from `at` on, a few now and the rest on the next turns of the event loop. */
function answer<Row>(chunk: readonly Waiting<Row>[], rows: ReadonlyMap<string, Row>, at: number): void {
  const end = Math.min(chunk.length, at + ANSWERS_PER_TURN);
  for (let i = at; i < end; i++) chunk[i]?.resolve(rows.get(chunk[i]?.id as string));
  if (end < chunk.length) setImmediate(() => answer(chunk, rows, end));
}

interface Waiting<Row> {
  readonly id: string;
  readonly newest: number;
  readonly resolve: (row: Row | undefined) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * @example
 * const loads = new LoadBatch<Row>((ids, newest) => readRows(ids, newest));
 * const [a, b] = await Promise.all([loads.load("alice", 64), loads.load("bob", 64)]); // one statement
 */
export class LoadBatch<Row> {
  #queue: Waiting<Row>[] = [];

  constructor(readonly read: ReadSessions<Row>) {}

  /** The row of session `id` with its newest `newest` messages; `undefined` if it does not exist. */
  load(id: string, newest: number): Promise<Row | undefined> {
    return new Promise((resolve, reject) => {
      if (this.#queue.length === 0) setImmediate(() => this.#flush());
      this.#queue.push({ id, newest, resolve, reject });
    });
  }

  #flush(): void {
    const queue = this.#queue;
    this.#queue = [];
    const byNewest = new Map<number, Waiting<Row>[]>();
    for (const waiting of queue) {
      const group = byNewest.get(waiting.newest);
      if (group) group.push(waiting);
      else byNewest.set(waiting.newest, [waiting]);
    }
    for (const [newest, group] of byNewest) {
      for (let i = 0; i < group.length; i += MAX_PER_STATEMENT) {
        const chunk = group.slice(i, i + MAX_PER_STATEMENT);
        this.read([...new Set(chunk.map((waiting) => waiting.id))], newest).then(
          (rows) => answer(chunk, rows, 0),
          (error: unknown) => {
            for (const waiting of chunk) waiting.reject(error);
          },
        );
      }
    }
  }
}

/**
 * The floors of the engine benchmark: what the same work costs with no engine at all. No
 * import of the engine, so that `engine-ab.ts` measures them alike in either checkout's process.
 */

/** The floor of ping-pong: a bare `await` loop handing an object from one async function to the next. */
export async function floor(events: number): Promise<number> {
  const handle = async (n: number) => ({ n: n + 1 });
  let ev = { n: 0 };
  while (ev.n < events) ev = await handle(ev.n);
  return ev.n;
}

/**
 * The floor of the fan-out: a bare promise pool, 8 async workers taking `events` items from a
 * queue, each awaiting once (as the benchmark's step does) and counting its result.
 */
export async function barePool(events: number): Promise<number> {
  const queue: { n: number }[] = [];
  for (let n = 0; n < events; n++) queue.push({ n });
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < queue.length) {
      const item = queue[next++] as { n: number };
      await Promise.resolve();
      const result = { n: item.n * 2 };
      if (result.n >= 0) done++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  if (done !== events) throw new Error(`pooled ${done} events, expected ${events}`);
  return done;
}

/** An event as the engine's are made: a class whose base constructor copies the fields in. */
class FloorEvent {
  constructor(fields: object) {
    Object.assign(this, fields);
  }
}
class FloorItem extends FloorEvent {
  declare n: number;
}
class FloorDone extends FloorEvent {
  declare n: number;
}

/**
 * The fan-out's own step code with no engine: the events made as the engine benchmark's start
 * step makes them, then 8 async workers taking them from a queue, each calling the benchmark's
 * two steps in turn (`work`: an `async` function that awaits once and returns a new event;
 * `collect`: an `async` function that counts) and awaiting each. What the counted fan-out costs
 * when the engine's bookkeeping is taken away: its distance to `barePool` is the steps' own.
 */
export async function stepsPool(events: number): Promise<number> {
  const queue: FloorItem[] = [];
  for (let n = 0; n < events; n++) queue.push(new FloorItem({ n }));
  let next = 0;
  let seen = 0;
  let result: number | undefined;
  const work = async (item: FloorItem) => {
    await Promise.resolve();
    return new FloorDone({ n: item.n * 2 });
  };
  const collect = async (_done: FloorDone) => (++seen === events ? seen : undefined);
  const worker = async () => {
    while (next < queue.length) {
      const taken = await collect(await work(queue[next++] as FloorItem));
      if (taken !== undefined) result = taken;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  if (result !== events) throw new Error(`counted ${String(result)} events, expected ${events}`);
  return result;
}

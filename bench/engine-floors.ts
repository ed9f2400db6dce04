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

import { describe, expect, it } from "vitest";
import { ConfigurationError, StartEvent, StopEvent, Workflow, exponentialBackoff, step } from "../../src/index.ts";

class RateLimited extends Error {}
class Fatal extends Error {}

describe("exponentialBackoff", () => {
  it("waits initialDelay × factor^(attempts − 1), capped at maxDelay, and gives up after maxAttempts", () => {
    const policy = exponentialBackoff({ maxAttempts: 6, initialDelay: 0.5, factor: 3, maxDelay: 10 });
    if (typeof policy !== "function") throw new Error("expected a function");
    const delays = [1, 2, 3, 4, 5, 6].map((attempts) => policy(attempts, new Error("x"), 0));
    expect(delays).toEqual([0.5, 1.5, 4.5, 10, 10, null]);
  });

  it("jitter takes a random part off each wait", () => {
    const policy = exponentialBackoff({ initialDelay: 2, jitter: 0.5, random: () => 0.5 });
    if (typeof policy !== "function") throw new Error("expected a function");
    expect(policy(1, new Error("x"), 0)).toBe(1.5); // 2 × (1 − 0.5 × 0.5)
    const full = exponentialBackoff({ initialDelay: 2, jitter: 1, random: () => 0 });
    if (typeof full !== "function") throw new Error("expected a function");
    expect(full(2, new Error("x"), 0)).toBe(4);
  });

  it("retryOn retries only the given error classes and their subclasses", () => {
    class TooManyRequests extends RateLimited {}
    const policy = exponentialBackoff({ initialDelay: 1, retryOn: [RateLimited] });
    if (typeof policy !== "function") throw new Error("expected a function");
    expect(policy(1, new TooManyRequests(), 0)).toBe(1);
    expect(policy(1, new Fatal(), 0)).toBeNull();
    expect(policy(1, "a string", 0)).toBeNull();
  });

  it("maxElapsed gives up rather than start a wait ending past it", () => {
    const policy = exponentialBackoff({ initialDelay: 4, maxElapsed: 10 });
    if (typeof policy !== "function") throw new Error("expected a function");
    expect(policy(1, new Error("x"), 6)).toBe(4);
    expect(policy(1, new Error("x"), 6.5)).toBeNull();
  });

  it("refuses bad options with a message naming them", () => {
    expect(() => exponentialBackoff({ jitter: 2 })).toThrow(expect.objectContaining({ name: "ConfigurationError", option: "jitter", received: 2 }));
    expect(() => exponentialBackoff({ factor: 0.5 })).toThrow(ConfigurationError);
    expect(() => exponentialBackoff({ factor: 0.5 })).toThrow(
      new ConfigurationError("exponentialBackoff: factor must be a finite number ≥ 1, got 0.5.", "factor", 0.5),
    );
  });
});

describe("retry policies in a run", () => {
  it("an error outside retryOn fails the step after one attempt", async () => {
    let attempts = 0;
    class Flaky extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent], retry: exponentialBackoff({ initialDelay: 0, retryOn: [RateLimited] }) })
      async call() {
        attempts++;
        throw new Fatal("bad request");
      }
    }
    await expect(new Flaky().run({})).rejects.toThrow(Fatal);
    expect(attempts).toBe(1);
  });

  it("an error in retryOn is retried until it succeeds", async () => {
    let attempts = 0;
    class Flaky extends Workflow<{}, number> {
      @step({ accepts: [StartEvent], emits: [StopEvent], retry: exponentialBackoff({ initialDelay: 0, retryOn: [RateLimited] }) })
      async call() {
        if (++attempts < 3) throw new RateLimited("slow down");
        return new StopEvent({ result: attempts });
      }
    }
    expect(await new Flaky().run({})).toBe(3);
  });

  it("a retry function receives the attempts, the error and the seconds elapsed", async () => {
    const calls: [number, string, number][] = [];
    class Flaky extends Workflow<{}, string> {
      @step({
        accepts: [StartEvent],
        emits: [StopEvent],
        retry: (attempts, error, elapsed) => {
          calls.push([attempts, (error as Error).message, elapsed]);
          return attempts < 2 ? 0 : null;
        },
      })
      async call() {
        throw new Error("down");
      }
    }
    await expect(new Flaky().run({})).rejects.toThrow("down");
    expect(calls.map(([a, m]) => [a, m])).toEqual([
      [1, "down"],
      [2, "down"],
    ]);
    for (const [, , elapsed] of calls) expect(elapsed).toBeGreaterThanOrEqual(0);
    expect(calls[1]?.[2]).toBeGreaterThanOrEqual(calls[0]?.[2] ?? 0);
  });
});

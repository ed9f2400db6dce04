import { describe, expect, it } from "vitest";
import { Context } from "../../src/index.ts";

describe("Context's public surface", () => {
  it("has no engine internals: saving, restoring and handing over a run are module-private", () => {
    const members = Object.getOwnPropertyNames(Context.prototype);
    for (const internal of [
      "savedRun",
      "settleSavedRun",
      "keepCancelledRun",
      "dropCancelledRun",
      "forExecution",
      "attach",
      "currentRun",
      "savedRunWasCancelled",
    ]) {
      expect(members).not.toContain(internal);
    }
    expect(members).toEqual(expect.arrayContaining(["once", "runId", "toJSON", "hasSavedRun"]));
  });
});

// Compiled with `experimentalDecorators: true`: resources must reach a step under the legacy convention too.
import { expect, it } from "vitest";
import { StartEvent, StopEvent, Workflow, resource, step, type Context } from "../../src/index.ts";

const config = resource(() => ({ greeting: "hi" }));

class Legacy extends Workflow<{}, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent], resources: { config } })
  async go(_ctx: Context, _ev: StartEvent, { config }: { config: { greeting: string } }) {
    return new StopEvent({ result: config.greeting });
  }
}

it("a step receives its resources under experimentalDecorators", async () => {
  expect(await new Legacy().run({})).toBe("hi");
});

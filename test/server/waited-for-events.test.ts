/**
 * A HumanResponseEvent subclass a step only awaits with `ctx.waitForEvent` is not in the graph,
 * so the server refuses it from clients (403) until the workflow lists it in `fromOutside`.
 * The refusal says so, and how to fix it, when the run is waiting for that very type.
 */
import { describe, expect, it } from "vitest";
import { WorkflowClient, WorkflowClientError } from "../../src/client/index.ts";
import { HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent, Workflow, step } from "../../src/index.ts";
import type { Context, FromOutside } from "../../src/index.ts";
import { WorkflowServer } from "../../src/server/workflow-server.ts";

class Question extends InputRequiredEvent<{ prefix: string }> {}
class Answer extends HumanResponseEvent<{ response: string }> {}

class Approval extends Workflow<{ name: string }, string> {
  @step({ accepts: [StartEvent], emits: [StopEvent] })
  async fire(ctx: Context, ev: StartEvent<{ name: string }>) {
    const answer = await ctx.waitForEvent(Answer, { waiterEvent: new Question({ prefix: `Fire ${ev.name}?` }) });
    return new StopEvent({ result: answer.response === "yes" ? `${ev.name} fired` : `${ev.name} kept` });
  }
}

class ListedApproval extends Approval {
  static override readonly fromOutside: FromOutside = { events: [Answer] };
}

async function askedRun(client: WorkflowClient, workflow: string): Promise<string> {
  const { id } = await client.start(workflow, { name: "Lawson" });
  for await (const ev of client.streamEvents(id)) if (ev.type === "Question") break;
  return id;
}

describe("an answer the run awaits only in ctx.waitForEvent", () => {
  it("is refused with what to add to the workflow, and taken once the workflow lists it", async () => {
    const server = new WorkflowServer({
      workflows: { approval: new Approval({ timeout: null }), listed: new ListedApproval({ timeout: null }) },
      store: "memory:",
    });
    const client = new WorkflowClient({ baseUrl: (await server.listen({ port: 0 })).url });
    try {
      const id = await askedRun(client, "approval");
      const refused = await client.sendEvent(id, "Answer", { response: "yes" }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(WorkflowClientError);
      expect((refused as WorkflowClientError).status).toBe(403);
      expect((refused as WorkflowClientError).message).toBe(
        'approval does not accept events of type "Answer" from outside a run. It accepts: HumanResponseEvent.' +
          " The run waits for Answer in ctx.waitForEvent, but a class only awaited there is not known to the server:" +
          " list it in Approval (static override readonly fromOutside: FromOutside = { events: [Answer] }), or accept it in a step.",
      );
      // A type the run does not wait for gets the refusal alone.
      const other = await client.sendEvent(id, "Nope", {}).catch((error: Error) => error.message);
      expect(other).toBe('approval does not accept events of type "Nope" from outside a run. It accepts: HumanResponseEvent.');
      await client.cancel(id);

      const listed = await askedRun(client, "listed");
      await client.sendEvent(listed, "Answer", { response: "yes" });
      expect((await client.wait(listed)).result).toBe("Lawson fired");
    } finally {
      await server.close();
    }
  });
});

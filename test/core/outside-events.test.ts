/** Which events a workflow accepts from outside a run: its answers, never its own internal events. */
import { describe, expect, it } from "vitest";
import { Event, HumanResponseEvent, StartEvent, StopEvent, Workflow, approvalAnswerOf, eventsFromOutside, step } from "../../src/index.ts";
import type { Context, FromOutside } from "../../src/index.ts";
import { ToolApprovalEvent } from "../../events/index.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";

class Draft extends Event<{ text: string }> {}
class Comment extends Event<{ text: string }> {}
class Verdict extends HumanResponseEvent<{ ok: boolean }> {}
class Approval extends HumanResponseEvent<{ approvalId: string; approved: boolean; reason?: string | undefined }> {}

class Review extends Workflow<{ text: string }, string> {
  static override readonly fromOutside: FromOutside = { events: [Comment], approvalAnswer: Approval };

  @step({ accepts: [StartEvent], emits: [Draft] })
  async write(_ctx: Context, ev: StartEvent<{ text: string }>) {
    return new Draft({ text: ev.text });
  }

  @step({ accepts: [Draft, Verdict, Comment], emits: [StopEvent] })
  async decide(_ctx: Context, ev: Draft | Verdict | Comment) {
    return new StopEvent({ result: ev instanceof Verdict ? String(ev.ok) : "draft" });
  }
}

describe("eventsFromOutside", () => {
  it("is the HumanResponseEvents the steps name, the class's fromOutside, and what a caller adds", () => {
    class Extra extends Event<{}> {}
    expect([...eventsFromOutside(new Review()).keys()].sort()).toEqual(["Approval", "Comment", "HumanResponseEvent", "Verdict"]);
    expect(eventsFromOutside(new Review(), [Extra]).get("Extra")).toBe(Extra);
    expect(eventsFromOutside(new Review()).has("Draft")).toBe(false);
    expect(approvalAnswerOf(new Review())).toBe(Approval);
  });

  it("for the agent: its approval answers, never its tool calls or chat history", () => {
    const agent = new FunctionCallingAgent({ llm: new ScriptedLLM([]) });
    expect([...eventsFromOutside(agent).keys()]).toEqual(["HumanResponseEvent", "agent.ToolApprovalEvent"]);
    expect(approvalAnswerOf(agent)).toBe(ToolApprovalEvent);
  });

  it("a workflow that declares nothing accepts HumanResponseEvent alone", () => {
    class Plain extends Workflow<{}, string> {
      @step({ accepts: [StartEvent], emits: [StopEvent] })
      async only() {
        return new StopEvent({ result: "ok" });
      }
    }
    expect([...eventsFromOutside(new Plain()).keys()]).toEqual(["HumanResponseEvent"]);
    expect(approvalAnswerOf(new Plain())).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tool } from "../../src/tools/tool.ts";
import { ToolApprovalError, ToolApprovalPolicy, describeArguments, notApproved } from "../../workflows/tool-approval.ts";

const fire = tool({
  name: "fire_employee",
  description: "Remove an employee.",
  parameters: z.object({ id: z.number() }),
  execute: ({ id }) => `removed ${id}`,
});
const find = tool({ name: "find_employee", description: "Find an employee.", parameters: z.object({ lastName: z.string() }), execute: () => ({ id: 7 }) });
const tools = [find, fire];
const fireCall = { id: "c_fire", name: "fire_employee", input: { id: 7 } };
const findCall = { id: "c_find", name: "find_employee", input: { lastName: "Lawson" } };

describe("ToolApprovalPolicy", () => {
  it("marks the calls a human must approve, each with its own question id, and none when nothing needs approval", () => {
    const marks = new ToolApprovalPolicy(["fire_employee"], tools).mark([findCall, fireCall, { ...fireCall, id: "c_fire2", input: { id: 8 } }]);
    expect(Object.keys(marks ?? {})).toEqual(["c_fire", "c_fire2"]);
    expect(marks?.c_fire).toMatch(/^[0-9a-f-]{36}$/);
    expect(marks?.c_fire).not.toBe(marks?.c_fire2);
    expect(new ToolApprovalPolicy(undefined, tools).mark([fireCall])).toBeUndefined();
    expect(new ToolApprovalPolicy((call) => call.name === "find_employee", tools).mark([findCall, fireCall])).toEqual({ c_find: expect.any(String) });
  });

  it("does not put to a human a call that cannot run", () => {
    const policy = new ToolApprovalPolicy(() => true, tools);
    expect(
      policy.mark([
        { id: "bad", name: "fire_employee", input: { id: "seven" } },
        { id: "none", name: "launch", input: {} },
      ]),
    ).toBeUndefined();
  });

  it("refuses an option it cannot use with a ToolApprovalError", () => {
    const caught = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return error;
      }
      throw new Error("did not throw");
    };
    const misspelt = caught(() => new ToolApprovalPolicy(["fire_employe"], tools));
    expect(misspelt).toBeInstanceOf(ToolApprovalError);
    expect((misspelt as Error).message).toBe(
      'needsApproval names "fire_employe", not among the agent\'s tools (find_employee, fire_employee). Check the spelling, or add the tool.',
    );
    expect(caught(() => new ToolApprovalPolicy("fire_employee" as never, tools))).toMatchObject({
      name: "ToolApprovalError",
      message: expect.stringMatching(/^needsApproval takes tool names/),
    });
    const cause = new Error("no policy");
    const threw = caught(() =>
      new ToolApprovalPolicy(() => {
        throw cause;
      }, tools).mark([fireCall]),
    );
    expect(threw).toMatchObject({ name: "ToolApprovalError", toolName: "fire_employee", cause });
    const promised = caught(() => new ToolApprovalPolicy((async () => true) as never, tools).mark([fireCall]));
    expect(promised).toMatchObject({ toolName: "fire_employee", message: expect.stringContaining("returned a promise") });
  });
});

describe("what the model and the human read", () => {
  it("says a call was not approved, with the reason when one was given", () => {
    expect(notApproved(fireCall, { approved: false, reason: " Ask HR first. " })).toEqual({
      toolCallId: "c_fire",
      toolName: "fire_employee",
      input: { id: 7 },
      output: "The user did not approve this call to fire_employee, so it was not run. The reason given: Ask HR first.",
      content: "The user did not approve this call to fire_employee, so it was not run. The reason given: Ask HR first.",
      isError: true,
    });
    expect(notApproved(fireCall, { approved: false }).content).toBe("The user did not approve this call to fire_employee, so it was not run.");
    expect(describeArguments(fireCall)).toBe('{"id":7}');
    expect(describeArguments({ ...fireCall, input: "not json" } as never)).toBe("not json");
  });
});

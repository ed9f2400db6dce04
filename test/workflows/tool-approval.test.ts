import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolApprovalEvent, ToolApprovalRequestEvent } from "../../events/index.ts";
import { approvalQuestion } from "../../src/cli/approval-prompt.ts";
import { ScriptedLLM } from "../../src/llm/scripted-llm.ts";
import { tool } from "../../src/tools/tool.ts";
import { FunctionCallingAgent } from "../../workflows/function-calling-agent.ts";
import { ToolApprovalError, ToolApprovalPolicy, describeArguments, notApproved } from "../../workflows/tool-approval.ts";
import { openApiTools } from "../../workflows/tools/rest-api.ts";
import type { OpenApiDocument } from "../../workflows/tools/rest-api.ts";
import { hrOpenApi, startHrApiServer } from "../support/hr-api-server.ts";
import type { HrApiServer } from "../support/hr-api-server.ts";

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
    expect(describeArguments(fireCall, tools)).toBe('{"id":7}');
    expect(describeArguments({ ...fireCall, input: "not json" } as never, tools)).toBe("not json");
  });
});

describe("the arguments a human approves are those the tool runs with", () => {
  let hr: HrApiServer | undefined;
  afterEach(async () => {
    await hr?.close();
    hr = undefined;
  });

  const demote = tool({
    name: "demote_employee",
    description: "Demote an employee.",
    parameters: z.object({ id: z.number(), reason: z.string().optional(), effective: z.string().optional() }),
    execute: ({ id, reason }) => `demoted ${id}${reason === undefined ? "" : ` (${reason})`}`,
  });

  it("asks without the nulls the model sent for optional arguments, and keeps the model's call in the event", async () => {
    const llm = new ScriptedLLM([
      { toolCalls: [{ id: "c1", name: "demote_employee", input: { id: 7, reason: null, effective: null } as never }] },
      { text: "Done." },
    ]);
    const handler = new FunctionCallingAgent({ llm, tools: [demote], needsApproval: ["demote_employee"] }).run({ input: "Demote Lawson" });
    const asked: { prefix: string; input: unknown; terminal: string }[] = [];
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) {
        asked.push({ prefix: ev.prefix, input: ev.toolCall.input, terminal: approvalQuestion(ev.toolCall, [demote]) });
        handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
      }
    }
    const { sources } = await handler;
    expect(asked).toEqual([
      {
        prefix: 'Run demote_employee with {"id":7}? (yes/no)', // what the web page's approval box shows
        input: { id: 7, reason: null, effective: null }, // the model's call, as saved runs hold it
        terminal: 'Approve demote_employee({"id":7})?',
      },
    ]);
    expect(sources[0]?.content).toBe("demoted 7");
  });

  it("shows a REST call's request and body without them, in the terminal, and sends none of them", async () => {
    hr = await startHrApiServer();
    const tools = openApiTools({ openApi: hrOpenApi as unknown as OpenApiDocument, baseURL: hr.baseURL });
    const call = { id: "c1", name: "patch_api_users_id", input: '{"id":7,"body":{"first_name":"Mike","last_name":"Lawson","email":null}}' as never };
    expect(approvalQuestion(call, tools)).toBe('Approve PATCH /api/users/7 with {"first_name":"Mike","last_name":"Lawson"}?');
    expect(describeArguments(call, tools)).toBe('{"id":7,"body":{"first_name":"Mike","last_name":"Lawson"}}');
    const llm = new ScriptedLLM([{ toolCalls: [call] }, { text: "Renamed." }]);
    const handler = new FunctionCallingAgent({ llm, tools, needsApproval: () => true }).run({ input: "Rename Lawson" });
    for await (const ev of handler.streamEvents()) {
      if (ev instanceof ToolApprovalRequestEvent) {
        expect(ev.prefix).toBe('Run patch_api_users_id with {"id":7,"body":{"first_name":"Mike","last_name":"Lawson"}}? (yes/no)');
        handler.ctx.sendEvent(new ToolApprovalEvent({ approvalId: ev.approvalId, approved: true }));
      }
    }
    await handler;
    expect(hr.requests.map((r) => [`${r.method} ${r.path}`, r.body])).toEqual([["PATCH /api/users/7", { first_name: "Mike", last_name: "Lawson" }]]);
  });
});

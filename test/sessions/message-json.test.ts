import { describe, expect, it } from "vitest";
import { messageJson } from "../../src/sessions/message-json.ts";

const message = (createdAt: unknown) => ({
  id: "m1",
  createdAt,
  role: "assistant",
  content: "",
  options: { toolCall: [{ id: "c", name: "add", input: { x: 1 } }] },
});

describe("messageJson", () => {
  it("writes a message with a createdAt Date as JSON.stringify does, whatever the time", () => {
    const times = [0, 1, 999, 1000, 59_999, 3_599_999, 86_399_999, 86_400_000, Date.UTC(2026, 10, 26, 3, 32, 27, 390), Date.UTC(2024, 1, 29, 23, 59, 59, 999)];
    // Times in order and out of order, on the same day and across days: the day's text kept from one call must not leak into another.
    let seed = 7;
    for (let i = 0; i < 2000; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      times.push(Date.UTC(2026, 0, 1) + (seed % (3 * 86_400_000)));
    }
    times.push(-1, -86_400_001, Date.UTC(10_000, 0, 1), Date.UTC(-5, 0, 1), Date.UTC(9999, 11, 31, 23, 59, 59, 999));
    for (const time of times) expect(messageJson(message(new Date(time)))).toBe(JSON.stringify(message(new Date(time))));
  });

  it("writes an invalid date as null, as Date#toJSON does", () => {
    expect(messageJson(message(new Date(Number.NaN)))).toBe(
      '{"id":"m1","createdAt":null,"role":"assistant","content":"","options":{"toolCall":[{"id":"c","name":"add","input":{"x":1}}]}}',
    );
  });

  it("leaves whatever is not a plain message with a plain Date to JSON.stringify", () => {
    class Stamp extends Date {
      override toJSON() {
        return "stamped";
      }
    }
    class Message {
      createdAt = new Date(0);
      toJSON() {
        return { text: "own" };
      }
    }
    const ownDateToJson = Object.assign(new Date(0), { toJSON: () => "own date" });
    const cases: unknown[] = [
      message(new Stamp(0)),
      new Message(),
      { createdAt: new Date(0), toJSON: () => "own message" },
      message(ownDateToJson),
      message("2026-01-01T00:00:00.000Z"),
      { role: "user", content: "no date" },
      Object.assign(Object.create(null) as object, { createdAt: new Date(5), role: "user" }),
      "text",
      null,
    ];
    for (const value of cases) expect(messageJson(value)).toBe(JSON.stringify(value));
  });
});

/**
 * The name under which the agent records a tool call's work with `ctx.once` (its approval, its
 * result). The name holds the call's id, which the model makes up: some models send ids of
 * hundreds of characters, more than `ctx.once` takes in a name.
 */
import { createHash } from "node:crypto";

/** `ctx.once`'s longest name. */
const MAX_NAME = 200;

/**
 * `"<what> <id>"`, or, for an id too long for that, `"<what> sha256:<hash of the id>"`: one name
 * per id either way. Short ids keep the plain name, so runs saved before still find their records.
 * The id itself is not changed: the model gets its answer under the id it gave.
 * @example
 * toolCallRecord("call", "call_1"); // "call call_1"
 * toolCallRecord("call", "x".repeat(300)); // "call sha256:2b0c…"
 */
export function toolCallRecord(what: "call" | "approval" | "approval id", id: string): string {
  const name = `${what} ${id}`;
  return name.length <= MAX_NAME ? name : `${what} sha256:${createHash("sha256").update(id).digest("hex")}`;
}

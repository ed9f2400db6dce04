/**
 * What the model reads when it sends an argument its tool does not take. zod says
 * `Unrecognized key: "Authorization"`, which neither tells the model what the tool takes nor
 * why a name it expected is not there: a tool that sends credentials itself (an API key in a
 * header) says that they come from its configuration, so the model leaves them out instead of
 * guessing at another name for them.
 */
import type { BaseTool } from "@llamaindex/core/llms";
import { isRecord } from "../core/internal.ts";

/** Why `name` is not an argument of a tool, or `undefined` to say only that it is not. @example `const why: UnknownArgumentReason = (name) => name === "token" ? "the tool sends its own token" : undefined;` */
export type UnknownArgumentReason = (name: string) => string | undefined;

const reasons = new WeakMap<BaseTool, UnknownArgumentReason>();

/**
 * Gives `made` the reason the model reads for an argument it does not take (say, a header the
 * tool sets itself); returns `made`.
 * @example
 * explainUnknownArguments(listUsers, (name) => (name.toLowerCase() === "authorization" ? "it is set by the tool itself: leave it out" : undefined));
 */
export function explainUnknownArguments<T extends BaseTool>(made: T, reason: UnknownArgumentReason): T {
  reasons.set(made, reason);
  return made;
}

/**
 * The model's line for `name`, which `made` does not take: the tool's reason when it has one,
 * else the arguments it does take, from its JSON schema.
 * @example unknownArgument(multiply, "z"); // '"z" is not an argument of multiply, which takes x, y'
 */
export function unknownArgument(made: BaseTool, name: string): string {
  const reason = reasons.get(made)?.(name);
  if (reason !== undefined) return `${JSON.stringify(name)}: ${reason}`;
  const parameters = made.metadata.parameters as unknown;
  const taken = isRecord(parameters) && isRecord(parameters.properties) ? Object.keys(parameters.properties) : [];
  const near = taken.find((argument) => argument.toLowerCase() === name.toLowerCase());
  if (near !== undefined) return `${JSON.stringify(name)} is not an argument of ${made.metadata.name}: send it as ${JSON.stringify(near)}`;
  return `${JSON.stringify(name)} is not an argument of ${made.metadata.name}, which takes ${taken.length > 0 ? taken.join(", ") : "none"}`;
}

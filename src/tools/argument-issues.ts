/**
 * A schema check's problems with a tool call's arguments, as the model reads them. zod's
 * messages name the problem in a parser's terms; the model reads instead: an argument the tool
 * does not take said with what the tool takes (not `Unrecognized key: "z"`), a value that fits
 * none of the forms a `oneOf`/`anyOf` allows with each form's problems (not `Invalid input`
 * alone, which leaves the model to guess and send the same value again), and a number, length,
 * format or option that is wrong in plain words with the value sent (plain-issues.ts).
 */
import type { BaseTool } from "@llamaindex/core/llms";
import { unknownArgument } from "./unknown-arguments.ts";
import { plainIssue } from "./plain-issues.ts";
import type { Sent } from "./plain-issues.ts";

/** One problem as zod 3, zod 4 or stepflow's own checks report it. @example `const issue: ArgumentIssue = { path: ["id"], message: "Invalid input: expected number, received string" };` */
export interface ArgumentIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

const MAX_FORMS = 4; // forms of a union described; a model needs the nearest few, not forty
const MAX_PER_FORM = 3; // problems described of each

/**
 * The model's line for one problem of a call to `tool`: where it is, then what. Given the
 * call's `args`, a value that is wrong is quoted back.
 * @example
 * argumentIssueText(multiply, { code: "unrecognized_keys", keys: ["z"], path: [], message: 'Unrecognized key: "z"' } as ArgumentIssue);
 * // '"z" is not an argument of multiply, which takes x, y'
 * @example
 * argumentIssueText(repeat, { code: "invalid_type", expected: "int", path: ["count"], message: "Invalid input: expected int, received number" } as ArgumentIssue, { count: 2.5 });
 * // "count: must be a whole number (such as 2 or 3), got 2.5"
 */
export function argumentIssueText(tool: BaseTool, issue: ArgumentIssue, args?: unknown): string {
  const { code, keys } = issue as { code?: unknown; keys?: unknown };
  if (code === "unrecognized_keys" && issue.path.length === 0 && Array.isArray(keys) && keys.length > 0 && issue.message.startsWith("Unrecognized key"))
    return keys.map((key) => unknownArgument(tool, String(key))).join("; ");
  return located(issue.path, what(issue, 0, args === undefined ? undefined : valueAt({ value: args }, issue.path)));
}

/** What was sent at `path` under `sent`: `{ value: undefined }` for a field left out, `undefined` when the shape differs. */
function valueAt(sent: Sent, path: readonly PropertyKey[]): Sent {
  let at = sent;
  for (const key of path) {
    const value: unknown = at?.value;
    if (typeof value !== "object" || value === null || typeof key === "symbol") return undefined;
    at = { value: Object.hasOwn(value, key) ? (value as Record<string | number, unknown>)[key] : undefined };
  }
  return at;
}

function located(path: readonly PropertyKey[], text: string): string {
  return path.length > 0 ? `${path.map(String).join(".")}: ${text}` : text;
}

/** What is wrong with `sent`, without where: a union's forms each with their own problems. */
function what(issue: ArgumentIssue, depth: number, sent: Sent): string {
  const { code, errors, keys } = issue as { code?: unknown; errors?: unknown; keys?: unknown };
  const plain = plainIssue(issue, sent);
  if (plain !== undefined) return plain;
  // Only zod's own words are replaced: a message the tool's author wrote stays.
  if (code === "unrecognized_keys" && Array.isArray(keys) && issue.message.startsWith("Unrecognized key"))
    return `${keys.map((key) => JSON.stringify(key)).join(", ")} ${keys.length === 1 ? "is not a field" : "are not fields"} of it`;
  if (code !== "invalid_union" || issue.message !== "Invalid input" || !Array.isArray(errors) || errors.length === 0 || depth > 2) return issue.message;
  const forms = errors.filter(Array.isArray) as ArgumentIssue[][];
  // A value of the wrong type for each form: one line, as for a single type.
  const types = forms.map((form) => (form.length === 1 && form[0]?.path.length === 0 ? typeMismatch(form[0]) : undefined));
  if (types.every((type) => type !== undefined) && new Set(types.map((type) => type.received)).size === 1)
    return `Invalid input: expected ${[...new Set(types.map((type) => type.expected))].join(" or ")}, received ${types[0]?.received ?? "another type"}`;
  const described = forms.slice(0, MAX_FORMS).map((form, i) => {
    const problems = form.slice(0, MAX_PER_FORM).map((inner) => located(inner.path, what(inner, depth + 1, valueAt(sent, inner.path))));
    const more = form.length > MAX_PER_FORM ? `; and ${form.length - MAX_PER_FORM} more` : "";
    // Brackets, as zod's messages hold commas ("expected boolean, received undefined").
    return `form ${i + 1} [${problems.join("; ")}${more}]`;
  });
  const others = forms.length > MAX_FORMS ? `, and ${forms.length - MAX_FORMS} other forms` : "";
  return `fits none of the ${forms.length} forms it may take: ${described.join(", ")}${others}`;
}

/** The expected and received types of a zod 4 `invalid_type` issue. */
function typeMismatch(issue: ArgumentIssue | undefined): { expected: string; received: string } | undefined {
  const { code, expected } = (issue ?? {}) as { code?: unknown; expected?: unknown };
  const received = /received (\S+)$/.exec(issue?.message ?? "")?.[1];
  return code === "invalid_type" && typeof expected === "string" && received !== undefined ? { expected, received } : undefined;
}

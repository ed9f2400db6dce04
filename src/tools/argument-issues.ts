/**
 * A schema check's problems with a tool call's arguments, as the model reads them. Most of
 * zod's messages say what was wrong (`Too big: expected number to be <=5`); two do not: an
 * argument the tool does not take (`Unrecognized key: "z"`, said with what the tool takes), and
 * a value that fits none of the forms a `oneOf`/`anyOf` allows, which zod reports as
 * `Invalid input` alone, leaving the model to guess and send the same value again.
 */
import type { BaseTool } from "@llamaindex/core/llms";
import { unknownArgument } from "./unknown-arguments.ts";

/** One problem as zod 3, zod 4 or stepflow's own checks report it. @example `const issue: ArgumentIssue = { path: ["id"], message: "Invalid input: expected number, received string" };` */
export interface ArgumentIssue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

const MAX_FORMS = 4; // forms of a union described; a model needs the nearest few, not forty
const MAX_PER_FORM = 3; // problems described of each

/**
 * The model's line for one problem of a call to `tool`: where it is, then what.
 * @example
 * argumentIssueText(multiply, { code: "unrecognized_keys", keys: ["z"], path: [], message: 'Unrecognized key: "z"' } as ArgumentIssue);
 * // '"z" is not an argument of multiply, which takes x, y'
 */
export function argumentIssueText(tool: BaseTool, issue: ArgumentIssue): string {
  const { code, keys } = issue as { code?: unknown; keys?: unknown };
  if (code === "unrecognized_keys" && issue.path.length === 0 && Array.isArray(keys) && keys.length > 0 && issue.message.startsWith("Unrecognized key"))
    return keys.map((key) => unknownArgument(tool, String(key))).join("; ");
  return located(issue.path, what(issue, 0));
}

function located(path: readonly PropertyKey[], text: string): string {
  return path.length > 0 ? `${path.map(String).join(".")}: ${text}` : text;
}

/** What is wrong, without where: a union's forms each with their own problems. */
function what(issue: ArgumentIssue, depth: number): string {
  const { code, errors, keys } = issue as { code?: unknown; errors?: unknown; keys?: unknown };
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
    const problems = form.slice(0, MAX_PER_FORM).map((inner) => located(inner.path, what(inner, depth + 1)));
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

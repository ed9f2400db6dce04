/**
 * zod's words for the commonest problems with a value, in plain words for the model: what it
 * must be, and what was sent. zod says `Invalid input: expected int, received number` for 2.5
 * (the model reads "number" and sends 2.5 again), `Too big: expected string to have <=4
 * characters`, `Invalid UUID`: none quotes the value, and `int`, `<=` and `received number`
 * are a parser's terms. Only zod's own (English) words are replaced: a message the tool's
 * author wrote stays as it is.
 */
import { quoteInput } from "../core/internal.ts";

/**
 * What was sent where a problem is: `{ value }` (`undefined` when the argument was left out),
 * or `undefined` when it cannot be told (a path into a value of another shape).
 * @example const sent: Sent = { value: 2.5 };
 */
export type Sent = { readonly value: unknown } | undefined;

/** The fields of a zod 4 issue these words read. */
interface ZodIssueFields {
  readonly code?: unknown;
  readonly message: string;
  readonly expected?: unknown;
  readonly origin?: unknown;
  readonly minimum?: unknown;
  readonly maximum?: unknown;
  readonly inclusive?: unknown;
  readonly exact?: unknown;
  readonly format?: unknown;
  readonly values?: unknown;
  readonly pattern?: unknown;
  readonly prefix?: unknown;
  readonly suffix?: unknown;
  readonly includes?: unknown;
}

/** What a format is, and one value of it, for `invalid_format`'s default messages. */
const FORMATS: Readonly<Record<string, readonly [string, string | undefined]>> = {
  email: ["an email address", "name@example.com"],
  uuid: ["a UUID", "3f2b8c1e-9d4a-4c7b-8e2f-1a6d5c9b7e04"],
  uuidv4: ["a version 4 UUID", "3f2b8c1e-9d4a-4c7b-8e2f-1a6d5c9b7e04"],
  uuidv6: ["a version 6 UUID", undefined],
  uuidv7: ["a version 7 UUID", undefined],
  guid: ["a GUID", "3f2b8c1e-9d4a-4c7b-8e2f-1a6d5c9b7e04"],
  url: ["a URL", "https://example.com/page"],
  datetime: ["an ISO 8601 date and time", "2026-11-29T14:30:00Z"],
  date: ["an ISO 8601 date", "2026-11-29"],
  time: ["an ISO 8601 time", "14:30:00"],
  ipv4: ["an IPv4 address", "192.0.2.1"],
  ipv6: ["an IPv6 address", "2001:db8::1"],
};

// zod 4's default (English) messages of the issues below; another message was the tool author's.
const DEFAULT_FORMAT_MESSAGE =
  /^Invalid (?:email address|UUID|UUIDv\d|GUID|URL|ISO (?:datetime|date|time)|IPv[46] address|string: must (?:match pattern|start with|end with|include) .*)$/;

/**
 * The plain words for `issue` (zod 4's) about the value `sent`, or `undefined` to keep zod's
 * message: an issue of another kind, or one whose message the tool's author wrote.
 * @example
 * plainIssue({ code: "invalid_type", expected: "int", message: "Invalid input: expected int, received number" }, { value: 2.5 });
 * // "must be a whole number (such as 2 or 3), got 2.5"
 */
export function plainIssue(issue: ZodIssueFields, sent: Sent): string | undefined {
  const { code, message } = issue;
  if (code === "invalid_type" && issue.expected === "int" && /^Invalid input: expected int, received \S+$/.test(message)) return wholeNumber(sent);
  if (code === "invalid_type" && issue.expected === "number" && message === "Invalid input: expected number, received string") return quotedNumber(sent);
  if (code === "invalid_type" && sent !== undefined && sent.value === undefined && /^Invalid input: expected \w+, received undefined$/.test(message))
    return required(issue.expected);
  if ((code === "too_small" || code === "too_big") && /^Too (?:small|big): expected /.test(message)) return size(issue, code === "too_small", sent);
  if (code === "invalid_format" && DEFAULT_FORMAT_MESSAGE.test(message)) return format(issue, sent);
  if (code === "invalid_value" && /^Invalid (?:option|input): expected /.test(message) && Array.isArray(issue.values) && issue.values.length > 0) {
    const values = issue.values.map(shown);
    return `must be ${values.length === 1 ? values[0] : `one of ${values.join(", ")}`}${got(sent)}`;
  }
  return undefined;
}

function wholeNumber(sent: Sent): string {
  if (sent !== undefined && sent.value === undefined) return "is required: send a whole number";
  const value = sent?.value;
  if (typeof value === "number" && Number.isFinite(value)) {
    const [low, high] = [Math.floor(value), Math.ceil(value)];
    return `must be a whole number (such as ${low} or ${high}), got ${value}`;
  }
  // "3": a number in quotes, which a model sends for a field it reads as text.
  const numeric = typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value)) ? Math.round(Number(value)) : undefined;
  return `must be a whole number, written as a JSON number without quotes${numeric === undefined ? "" : ` (such as ${numeric})`}${got(sent)}`;
}

/** JSON's words for a type zod names, as the model reads them. */
const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  null: "null",
};

/** An argument left out: zod says `expected number, received undefined`, which reads as if something had been sent. */
function required(expected: unknown): string {
  const words = typeof expected === "string" ? TYPE_WORDS[expected] : undefined;
  return words === undefined ? "is required, and was left out" : `is required: send ${words}`;
}

/** A number sent as text (`"3"`): what a model sends for a field it reads as text. */
function quotedNumber(sent: Sent): string | undefined {
  const value = sent?.value;
  if (typeof value !== "string" || value.trim() === "" || !Number.isFinite(Number(value))) return undefined;
  return `must be a number, written without quotes (such as ${Number(value)}), got ${shown(value)}`;
}

function size(issue: ZodIssueFields, small: boolean, sent: Sent): string | undefined {
  const limit = small ? issue.minimum : issue.maximum;
  if (typeof limit !== "number" && typeof limit !== "bigint") return undefined;
  const value = sent?.value;
  const bound =
    issue.exact === true ? "exactly" : small ? (issue.inclusive === false ? "more than" : "at least") : issue.inclusive === false ? "fewer than" : "at most";
  switch (issue.origin) {
    case "number":
    case "int":
    case "bigint": {
      const words =
        issue.exact === true
          ? "exactly"
          : small
            ? issue.inclusive === false
              ? "greater than"
              : "at least"
            : issue.inclusive === false
              ? "less than"
              : "at most";
      return `must be ${words} ${limit}${got(sent)}`;
    }
    case "string":
      return `must be ${bound} ${plural(limit, "character")} long${typeof value === "string" ? `, got ${plural(value.length, "character")} (${shown(value)})` : got(sent)}`;
    case "array":
    case "set":
      return `must have ${bound} ${plural(limit, "item")}${Array.isArray(value) ? `, got ${value.length}` : value instanceof Set ? `, got ${value.size}` : got(sent)}`;
    default:
      return undefined;
  }
}

function format(issue: ZodIssueFields, sent: Sent): string | undefined {
  const what =
    issue.format === "regex" && issue.pattern !== undefined
      ? `text matching the pattern ${String(issue.pattern)}`
      : issue.format === "starts_with" && typeof issue.prefix === "string"
        ? `text that starts with ${JSON.stringify(issue.prefix)}`
        : issue.format === "ends_with" && typeof issue.suffix === "string"
          ? `text that ends with ${JSON.stringify(issue.suffix)}`
          : issue.format === "includes" && typeof issue.includes === "string"
            ? `text that includes ${JSON.stringify(issue.includes)}`
            : undefined;
  if (what !== undefined) return `must be ${what}${got(sent)}`;
  const known = typeof issue.format === "string" ? FORMATS[issue.format] : undefined;
  if (known === undefined) return undefined;
  const [description, example] = known;
  return `must be ${description}${example === undefined ? "" : ` such as ${example}`}${got(sent)}`;
}

function plural(count: number | bigint, noun: string): string {
  return `${count} ${noun}${count === 1 || count === 1n ? "" : "s"}`;
}

/** `, got …` with the value as the model sent it, when it is known; `, got nothing` for one left out. */
function got(sent: Sent): string {
  if (sent === undefined) return "";
  return sent.value === undefined ? ", got nothing (it is required)" : `, got ${shown(sent.value)}`;
}

/** A value as the model's line quotes it: a string quoted and cut, anything else as its JSON, cut. */
function shown(value: unknown): string {
  if (typeof value === "string") return quoteInput(value, 60);
  if (typeof value === "bigint") return String(value);
  const json = JSON.stringify(value);
  if (json === undefined) return String(value);
  return json.length > 80 ? `${json.slice(0, 80)}… (${json.length} characters of JSON)` : json;
}

/**
 * How text a user gave appears in error messages: quoted, cut to a readable length, and
 * without the password of any URL in it. Shared by the CLI, the session stores, the OpenAI
 * adapter and the agent.
 */

// `scheme://user:password@` (also "scheme:/" and "scheme:\\", which URL parsers accept): the password part.
const URL_CREDENTIALS = /\b([a-z][a-z\d+.-]*:[/\\]*[^\s:/\\?#@]*):[^\s/\\?#@]*@/gi;
// `user:password@host` without a scheme (a mistyped URL: "bob:pw@localhost", "http//bob:pw@host").
const BARE_CREDENTIALS = /(^|[\s"'/\\])([^\s:/\\?#@"']+):[^\s/\\?#@]+@/g;
// `password=…` of a PostgreSQL keyword connection string ("host=db password=pw"), quoted or not.
const KEYWORD_PASSWORD = /\b(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|[^\s'][^\s]*)/gi;

/**
 * Masks every password in `text`: of each URL (`scheme://user:password@`, also mistyped
 * without the scheme) and of each `password=` of a PostgreSQL connection string. The one
 * way stepflow hides a password in what it prints.
 * @example maskCredentials("http://bob:pw@host/v1") // "http://bob:***@host/v1"
 */
export function maskCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, "$1:***@").replace(BARE_CREDENTIALS, "$1$2:***@").replace(KEYWORD_PASSWORD, "$1***");
}

/**
 * A value the user gave, quoted for an error message and cut to `max` characters, so a
 * mistaken 5,000-character argument does not fill the screen.
 * @example quoteInput("a".repeat(5000), 3) // '"aaa…" (5000 characters)'
 */
export function quoteInput(value: string, max = 40): string {
  const chars = Array.from(value); // by code point: a cut never splits a surrogate pair
  if (chars.length <= max) return JSON.stringify(value);
  return `${JSON.stringify(`${chars.slice(0, max).join("")}…`)} (${chars.length} characters)`;
}

/**
 * A value a caller gave, as an error message shows it: a plain object or array as its JSON
 * (cut to 200 characters), a string quoted, a function or class by its name, an instance of a
 * class by the class (its fields may be large or private), anything else as its text.
 * @example
 * describeValue({ approved: "yes" }); // '{"approved":"yes"}'
 * describeValue("x"); // 'the string "x"'
 * describeValue(String); // "the function String"
 * describeValue(new Map()); // "an object (Map)"
 */
export function describeValue(value: unknown): string {
  if (typeof value === "string") return `the string ${quoteInput(value, 200)}`;
  if (typeof value === "function") return `the function ${value.name || "(anonymous)"}`;
  if (typeof value !== "object" || value === null) return String(value);
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null && !Array.isArray(value)) return `an object (${value.constructor?.name ?? "Object"})`;
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch {
    return `an object (${Array.isArray(value) ? "Array" : "Object"}) that JSON cannot write`;
  }
  const chars = Array.from(json);
  return chars.length <= 200 ? json : `${chars.slice(0, 200).join("")}… (${chars.length} characters)`;
}

/**
 * " with {…}" for a timeout message; nothing when there are no requirements, or they cannot be shown.
 * @example `Waiting for: Answer${describeRequirements({ id: 1 })}` // Waiting for: Answer with {"id":1}
 */
export function describeRequirements(requirements: Readonly<Record<string, unknown>> | undefined): string {
  if (!requirements || Object.values(requirements).every((value) => value === undefined)) return "";
  try {
    return ` with ${JSON.stringify(requirements)}`;
  } catch {
    return ` with ${Object.keys(requirements).join(", ")} set`; // a BigInt or a cycle: JSON cannot show it
  }
}

/**
 * What kind of value `value` is, for a message: "null", "an array", "an object (Date)", "a string".
 * @example `returned ${describeKind([1])}` // returned an array
 */
export function describeKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return `an object (${value.constructor?.name ?? "Object"})`;
  return `a ${typeof value}`;
}

/**
 * Request bodies the REST tools can send besides JSON: which of an OpenAPI operation's body
 * types a tool sends, and a form body (`application/x-www-form-urlencoded`, as Stripe's API
 * takes) made from the object the model gave.
 */
import { isRecord } from "../../src/core/internal.ts";

/** How a tool sends an operation's body: JSON, a form, or not at all (a type it cannot make). */
export type BodyKind = "json" | "form" | "unsupported";

const JSON_TYPE = /[/+]json\b/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded\b/i;

/**
 * The media type of `content` (an OpenAPI request body's) a tool sends, JSON first; `*\/*`
 * takes JSON too. `undefined` when the operation takes no body.
 * @example requestBodyType({ "application/x-www-form-urlencoded": {}, "application/json": {} }); // { kind: "json", mediaType: "application/json" }
 */
export function requestBodyType(content: unknown): { kind: BodyKind; mediaType: string } | undefined {
  if (!isRecord(content)) return undefined;
  const types = Object.keys(content);
  if (types.length === 0) return undefined;
  const json = types.find((type) => JSON_TYPE.test(type)) ?? types.find((type) => type.trim() === "*/*");
  if (json) return { kind: "json", mediaType: json };
  const form = types.find((type) => FORM_TYPE.test(type));
  if (form) return { kind: "form", mediaType: form };
  return { kind: "unsupported", mediaType: types.join(" or ") };
}

/**
 * The fields of a form body's media type whose `encoding` is `style: deepObject` (Stripe's
 * `metadata[plan]=pro`, `items[0][price]=p1`): sent nested, in brackets.
 * @example deepObjectFields({ encoding: { metadata: { style: "deepObject", explode: true } } }); // Set { "metadata" }
 */
export function deepObjectFields(mediaType: unknown): ReadonlySet<string> {
  const encoding = isRecord(mediaType) && isRecord(mediaType.encoding) ? mediaType.encoding : {};
  return new Set(Object.entries(encoding).flatMap(([name, rule]) => (isRecord(rule) && rule.style === "deepObject" ? [name] : [])));
}

type Scalar = string | number | boolean;
const isScalar = (value: unknown): value is Scalar => typeof value === "string" || typeof value === "number" || typeof value === "boolean";

/**
 * `body` as a form: a field per property, a list as the field repeated (OpenAPI's default), a
 * `deepObjects` field in brackets at any depth, lists by index. Anything else nested is an
 * error for the model: the API's way of reading it is not known.
 * @example formBody({ amount: 500, metadata: { plan: "pro" } }, new Set(["metadata"])).toString(); // "amount=500&metadata%5Bplan%5D=pro"
 */
export function formBody(body: unknown, deepObjects: ReadonlySet<string>): URLSearchParams {
  if (!isRecord(body)) throw new Error("The body must be an object of form fields.");
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    if (deepObjects.has(name)) appendDeep(form, name, value);
    else if (isScalar(value)) form.append(name, String(value));
    else if (Array.isArray(value) && value.every(isScalar)) for (const item of value) form.append(name, String(item));
    else throw new Error(`The form field ${JSON.stringify(name)} must be a text, a number, a boolean or a list of them.`);
  }
  return form;
}

function appendDeep(form: URLSearchParams, key: string, value: unknown): void {
  if (Array.isArray(value)) value.forEach((item, index) => appendDeep(form, `${key}[${index}]`, item));
  else if (isRecord(value)) for (const [name, item] of Object.entries(value)) appendDeep(form, `${key}[${name}]`, item);
  else if (isScalar(value)) form.append(key, String(value));
}

/**
 * A form built from a workflow's input JSON Schema (what the server lists, from its zod
 * schema): a field per property, with the schema's limits as the browser's own checks, so a
 * wrong value is caught before the run starts. A property the form cannot show as one field
 * (a list, a nested object) is a JSON box; a workflow without a schema gets one JSON box.
 */
import { h } from "./dom.ts";

/** The parts of a JSON Schema the form reads. */
interface Schema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly description?: string;
  readonly enum?: readonly unknown[];
  readonly default?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly format?: string;
}

/** A form's fields, and how to read the input they make (`undefined` when a field is wrong: the browser shows which). */
export interface SchemaForm {
  readonly fields: HTMLElement;
  read(): unknown;
}

/**
 * Whether a workflow is a chat: its input schema is one text property `input` (the agent's
 * shape), or it declares none and streams the agent's events. The page shows a chat for it,
 * a form for any other.
 */
export function isChatWorkflow(info: { readonly inputSchema?: unknown; readonly events: readonly { readonly type: string }[] }): boolean {
  const s = info.inputSchema as Schema | undefined;
  if (!s || typeof s !== "object") return info.events.some((e) => e.type === "agent.StreamEvent" || e.type === "agent.ToolCallEvent");
  const names = Object.keys(s.properties ?? {});
  return names.length === 1 && names[0] === "input" && s.properties?.input?.type === "string";
}

const typeOf = (s: Schema): string | undefined => (Array.isArray(s.type) ? s.type.find((t) => t !== "null") : (s.type as string | undefined));

/** The fields for `schema` (a JSON Schema object, or undefined for free JSON). */
export function schemaForm(schema: unknown, idPrefix: string): SchemaForm {
  const s = schema as Schema | undefined;
  if (!s || typeOf(s) !== "object" || !s.properties) return jsonOnly(idPrefix);
  const required = new Set(s.required ?? []);
  const readers: [string, () => { ok: boolean; value?: unknown }][] = [];
  const fields = h("div", { class: "form-fields" });
  for (const [name, prop] of Object.entries(s.properties)) {
    const id = `${idPrefix}-${name}`;
    const type = typeOf(prop);
    const label = h("label", { for: id }, name, required.has(name) ? h("span", { class: "required", "aria-hidden": "true" }, " *") : null);
    const hint = prop.description ? h("small", { id: `${id}-hint`, class: "hint" }, prop.description) : null;
    const common = { id, name, "aria-describedby": prop.description ? `${id}-hint` : undefined, required: required.has(name) && type !== "boolean" };
    let control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
    let read: () => { ok: boolean; value?: unknown };
    if (prop.enum) {
      const select = h(
        "select",
        common,
        ...(required.has(name) ? [] : [h("option", { value: "" }, "—")]),
        ...prop.enum.map((v, i) => h("option", { value: String(i), selected: prop.default === v }, String(v))),
      );
      control = select;
      read = () => ({ ok: true, value: select.value === "" ? undefined : prop.enum?.[Number(select.value)] });
    } else if (type === "boolean") {
      const box = h("input", { ...common, type: "checkbox", checked: prop.default === true });
      control = box;
      read = () => ({ ok: true, value: box.checked });
    } else if (type === "number" || type === "integer") {
      const input = h("input", {
        ...common,
        type: "number",
        step: type === "integer" ? 1 : "any",
        min: prop.minimum,
        max: prop.maximum,
        value: typeof prop.default === "number" ? prop.default : undefined,
      });
      control = input;
      read = () => ({ ok: input.checkValidity(), value: input.value === "" ? undefined : Number(input.value) });
    } else if (type === "string") {
      const input = h("input", {
        ...common,
        type: prop.format === "email" ? "email" : prop.format === "uri" ? "url" : "text",
        minlength: prop.minLength,
        maxlength: prop.maxLength,
        pattern: prop.pattern,
        value: typeof prop.default === "string" ? prop.default : undefined,
      });
      control = input;
      read = () => ({ ok: input.checkValidity(), value: input.value === "" && !required.has(name) ? undefined : input.value });
    } else {
      const area = h("textarea", { ...common, rows: 3, class: "json-input", placeholder: type === "array" ? "[ … ] (JSON)" : "JSON" });
      if (prop.default !== undefined) area.value = JSON.stringify(prop.default);
      control = area;
      read = () => readJson(area, required.has(name));
    }
    control.addEventListener("input", () => control.setCustomValidity(""));
    readers.push([name, read]);
    fields.append(h("div", { class: "field" }, label, control, hint));
  }
  return {
    fields,
    read() {
      const input: Record<string, unknown> = {};
      let ok = true;
      for (const [name, read] of readers) {
        const got = read();
        ok &&= got.ok;
        if (got.value !== undefined) input[name] = got.value;
      }
      return ok ? input : undefined;
    },
  };
}

function jsonOnly(idPrefix: string): SchemaForm {
  const area = h("textarea", { id: `${idPrefix}-json`, rows: 4, class: "json-input", "aria-label": "Input (JSON)" });
  area.value = "{}";
  area.addEventListener("input", () => area.setCustomValidity(""));
  return {
    fields: h(
      "div",
      { class: "form-fields" },
      h(
        "div",
        { class: "field" },
        h("label", { for: area.id }, "Input (JSON)"),
        area,
        h("small", { class: "hint" }, "This workflow declares no input schema."),
      ),
    ),
    read: () => {
      const got = readJson(area, true);
      return got.ok ? (got.value ?? {}) : undefined;
    },
  };
}

function readJson(area: HTMLTextAreaElement, required: boolean): { ok: boolean; value?: unknown } {
  const text = area.value.trim();
  if (text === "") return { ok: !required || area.reportValidity(), value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    area.setCustomValidity(`Not JSON: ${error instanceof Error ? error.message : String(error)}`);
    area.reportValidity();
    return { ok: false };
  }
}

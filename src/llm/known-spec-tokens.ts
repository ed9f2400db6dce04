/**
 * Tokens (cl100k_base) of the calculator tools' specs, by the specs' JSON. An agent counts
 * the tokens of the specs it sends on every LLM call; with these tools alone (the CLI's
 * default, the offline demo) the count is known here, so no tokenizer is loaded: loading one
 * (about 1 MB of byte-pair ranks) took most of the time of a one-shot `stepflow "…"` answer.
 * A spec not here, or one that changed, is tokenized as before; test/llm/token-usage.test.ts
 * checks every count against the tokenizer.
 */

/** The calculator tools' parameters, as `tool()` turns their zod schema into JSON schema. */
const OPERANDS = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { x: { type: "number", description: "The first number." }, y: { type: "number", description: "The second number." } },
  required: ["x", "y"],
  additionalProperties: false,
};

const spec = (name: string, description: string) => JSON.stringify({ type: "function", function: { name, description, parameters: OPERANDS } });

/**
 * Known token counts, by a tool spec's JSON (as `JSON.stringify(toolSpec(tool))` writes it).
 * @example KNOWN_SPEC_TOKENS.get(JSON.stringify(toolSpec(add))); // 84
 */
export const KNOWN_SPEC_TOKENS: ReadonlyMap<string, number> = new Map([
  [spec("add", "Add two numbers: x + y."), 84],
  [spec("subtract", "Subtract two numbers: x - y."), 85],
  [spec("multiply", "Multiply two numbers: x * y."), 84],
  [spec("divide", "Divide two numbers: x / y. y must not be 0."), 92],
]);

/**
 * Argument names every provider takes. Anthropic (and Bedrock) check the keys of a tool's
 * `input_schema.properties` against `^[a-zA-Z0-9_.-]{1,64}$` and refuse the whole request
 * otherwise ("Property keys should match pattern"), whichever tool the model wanted: one
 * OpenAPI operation with JSON:API's `filter[status]` or OData's `$top`, or one MCP tool with
 * such an argument, would stop every call of the agent.
 */

const MAX_ARGUMENT = 64;
const VALID_ARGUMENT = /^[a-zA-Z0-9_.-]{1,64}$/;

/**
 * The name to give each of `names` that providers refuse as an argument (`filter[status]` →
 * `filter.status`, `$top` → `top`), never one of `names` or another made name; names they take
 * are not in the map.
 * @example providerArgumentNames(["filter[status]", "$top", "top"]); // Map { "filter[status]" => "filter.status", "$top" => "top_2" }
 */
export function providerArgumentNames(names: Iterable<string>): Map<string, string> {
  const all = [...names];
  const taken = new Set(all.filter((name) => VALID_ARGUMENT.test(name)));
  const made = new Map<string, string>();
  for (const name of all) {
    if (VALID_ARGUMENT.test(name)) continue;
    const base =
      name
        .replace(/\[([^\]]*)\]/g, ".$1")
        .replace(/[^a-zA-Z0-9_.-]+/g, "_")
        .replace(/^[_.]+|[_.]+$/g, "")
        .slice(0, MAX_ARGUMENT) || "argument";
    let argument = base;
    for (let n = 2; taken.has(argument); n++) argument = `${base.slice(0, MAX_ARGUMENT - String(n).length - 1)}_${n}`;
    taken.add(argument);
    made.set(name, argument);
  }
  return made;
}

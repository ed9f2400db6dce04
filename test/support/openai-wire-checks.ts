/**
 * The provider scenarios on OpenAI's chat completions wire: test/support/openai-sse-server.ts
 * streams the turns, and each request it got is checked as OpenAI checks them (each assistant
 * `tool_calls` answered by `tool` messages with their ids before anything else, arguments as
 * JSON strings, tool messages only after such calls) and for `stream_options.include_usage`,
 * without which OpenAI streams no usage.
 */
import { startOpenAIServer } from "./openai-sse-server.ts";
import type { ChatRequestBody } from "./openai-sse-server.ts";
import { isObject, turnUsage } from "./wire-server.ts";
import type { WireServer, WireTurn } from "./wire-server.ts";

/**
 * @example
 * const server = await startCheckedOpenAIServer([{ text: "Hi!" }]);
 * const llm = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "test-key" });
 */
export async function startCheckedOpenAIServer(turns: readonly WireTurn[]): Promise<WireServer> {
  const server = await startOpenAIServer({
    turns: turns.map((turn, i) => {
      const usage = turnUsage(turn, i);
      return {
        ...(turn.text ? { text: [turn.text.slice(0, 9), turn.text.slice(9)] } : {}),
        ...(turn.calls ? { toolCalls: turn.calls.map((call, j) => ({ id: `call_${i}_${j}`, name: call.name, arguments: call.input })) } : {}),
        usage: { prompt_tokens: usage.input, completion_tokens: usage.output },
      };
    }),
  });
  const requests = server.requests;
  return {
    url: server.baseURL.replace(/\/v1$/, ""),
    requests: requests as unknown as WireServer["requests"],
    get refused() {
      return requests.map(({ body }) => openAIRequestProblem(body)).filter((problem) => problem !== undefined);
    },
    close: () => server.close(),
  };
}

/** What OpenAI would refuse in `body` (its error message), or what makes it stream no usage. */
export function openAIRequestProblem(body: ChatRequestBody): string | undefined {
  const format = responseFormatProblem(body.response_format);
  if (format) return format;
  if (body.tool_choice !== undefined && !body.tools?.length)
    return "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.";
  if (!isObject(body.stream_options) || body.stream_options.include_usage !== true) return "stream_options.include_usage is not true: OpenAI streams no usage";
  let pending: string[] = [];
  for (const [i, message] of body.messages.entries()) {
    if (message.role === "tool") {
      if (!message.tool_call_id || !pending.includes(message.tool_call_id))
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (messages[${i}]).`;
      pending = pending.filter((id) => id !== message.tool_call_id);
      continue;
    }
    if (pending.length > 0)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(", ")}`;
    pending = [];
    for (const call of message.tool_calls ?? []) {
      if (typeof call.function.arguments !== "string") return `messages[${i}].tool_calls: function.arguments must be a string`;
      pending.push(call.id);
    }
  }
  return undefined;
}

/** What OpenAI says of a `response_format` it refuses (strict mode's rules for the schema included). */
function responseFormatProblem(format: unknown): string | undefined {
  if (format === undefined) return undefined;
  if (!isObject(format) || !["text", "json_object", "json_schema"].includes(String(format.type))) return "Invalid value for 'response_format.type'.";
  if (format.type !== "json_schema") return undefined;
  const spec = format.json_schema;
  if (!isObject(spec) || typeof spec.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(spec.name))
    return "Invalid 'response_format.json_schema.name': string does not match pattern.";
  if (!isObject(spec.schema)) return "Missing required parameter: 'response_format.json_schema.schema'.";
  if (spec.strict === true) return strictProblem(spec.schema, spec.name, []);
  return undefined;
}

function strictProblem(schema: unknown, name: string, path: string[]): string | undefined {
  if (!isObject(schema)) return undefined;
  if (schema.type === "object") {
    const keys = Object.keys(isObject(schema.properties) ? schema.properties : {});
    const required = Array.isArray(schema.required) ? schema.required : [];
    const where = `Invalid schema for response_format '${name}': In context=(${path.map((p) => `'${p}'`).join(", ")})`;
    if (schema.additionalProperties !== false) return `${where}, 'additionalProperties' is required to be supplied and to be false.`;
    const missing = keys.find((key) => !required.includes(key));
    if (missing) return `${where}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`;
    for (const key of keys) {
      const problem = strictProblem((schema.properties as Record<string, unknown>)[key], name, [...path, "properties", key]);
      if (problem) return problem;
    }
  }
  return schema.type === "array" ? strictProblem(schema.items, name, [...path, "items"]) : undefined;
}

/** The contents of the `tool` messages at the end of a request, in order. */
export function openAIToolResults(body: unknown): string[] {
  const messages = (body as ChatRequestBody).messages;
  const results: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === "tool"; i--) results.unshift(String(messages[i]?.content));
  return results;
}

/**
 * The Gemini API's `v1beta/` and `v1/models/{model}:streamGenerateContent?alt=sse` on 127.0.0.1: it refuses what
 * the real API refuses (a wrong key, a turn without parts, a role other than user and model, a
 * function call turn not right after a user or function response turn, a number of function
 * responses unlike the number of calls they answer, a call sent back without the thought
 * signature it came with) with the API's error body, and streams scripted turns as the API does:
 * server-sent `GenerateContentResponse` chunks with `usageMetadata`, text in pieces, a turn's
 * function calls in one chunk (the first with a `thoughtSignature`), `finishReason` on the last.
 */
import type { ServerResponse } from "node:http";
import { isObject, sendJSON, startWireServer, turnUsage } from "./wire-server.ts";
import type { WireRequest, WireServer, WireTurn } from "./wire-server.ts";

export interface GeminiServerOptions {
  readonly turns: readonly WireTurn[];
  /** The key the server accepts in `x-goog-api-key`. Default "test-key". */
  readonly apiKey?: string;
  /** Refuse every request, repeating the key sent, as a careless proxy does. */
  readonly echoKey?: boolean;
}

/**
 * @example
 * const server = await startGeminiServer({ turns: [{ text: "Hi!" }] });
 * const llm = new Gemini({ baseURL: server.url, apiKey: "test-key" });
 */
export function startGeminiServer(options: GeminiServerOptions): Promise<WireServer> {
  const apiKey = options.apiKey ?? "test-key";
  const signatures = new Map<string, string>(); // call name + args → the signature sent with it
  let turnIndex = 0;
  return startWireServer((request, res) => {
    const route = /^\/v1(?:beta)?\/models\/([^/:]+):streamGenerateContent\?alt=sse$/.exec(request.path);
    if (request.method !== "POST" || !route) return refuse(res, 404, "NOT_FOUND", `Not found: ${request.method} ${request.path}`);
    const key = String(request.headers["x-goog-api-key"] ?? "");
    if (options.echoKey) return refuse(res, 400, "INVALID_ARGUMENT", `API key not valid: ${key}. Please pass a valid API key.`);
    if (key !== apiKey) return refuse(res, 400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.");
    const problem = invalid(request, signatures);
    if (problem) return refuse(res, 400, "INVALID_ARGUMENT", problem);
    const index = turnIndex++;
    const turn = options.turns[index];
    if (!turn) return refuse(res, 400, "INVALID_ARGUMENT", `the test server has no turn #${index + 1}`);
    stream(res, turn, index, decodeURIComponent(route[1] as string), signatures);
    return undefined;
  });
}

function refuse(res: ServerResponse, code: number, status: string, message: string): string {
  sendJSON(res, code, { error: { code, message, status } });
  return message;
}

const callKey = (call: { name?: unknown; args?: unknown }) => `${String(call.name)} ${JSON.stringify(call.args ?? {})}`;

function invalid(request: WireRequest, signatures: Map<string, string>): string | undefined {
  const body = request.body;
  if (!isObject(body) || !Array.isArray(body.contents) || body.contents.length === 0) return "* GenerateContentRequest.contents: contents is not specified";
  if (body.systemInstruction !== undefined && !isObject(body.systemInstruction)) return "systemInstruction: must be a Content";
  const generation = isObject(body.generationConfig) ? body.generationConfig : {};
  if (generation.responseJsonSchema !== undefined) {
    if (generation.responseMimeType !== "application/json")
      return "* GenerateContentRequest.generation_config.response_mime_type: must be application/json when response_json_schema is set";
    if (!isObject(generation.responseJsonSchema)) return "* GenerateContentRequest.generation_config.response_json_schema: must be a JSON Schema object";
    if (generation.responseSchema !== undefined) return "response_schema and response_json_schema cannot both be set";
  }
  let previous: { role: string; calls: number; responses: number; callNames: string[] } | undefined;
  for (const [i, content] of (body.contents as unknown[]).entries()) {
    if (!isObject(content)) return `contents[${i}]: must be an object`;
    const role = String(content.role);
    if (role !== "user" && role !== "model") return `Please use a valid role: user, model. (contents[${i}].role is "${role}")`;
    if (!Array.isArray(content.parts) || content.parts.length === 0) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`;
    let calls = 0;
    let responses = 0;
    const callNames: string[] = [];
    for (const [j, part] of (content.parts as unknown[]).entries()) {
      if (!isObject(part)) return `contents[${i}].parts[${j}]: must be an object`;
      if (part.text !== undefined && typeof part.text !== "string") return `contents[${i}].parts[${j}].text: must be a string`;
      if (isObject(part.functionCall)) {
        if (role !== "model") return `contents[${i}].parts[${j}]: function calls are only allowed in model turns`;
        if (!isObject(part.functionCall.args ?? {})) return `contents[${i}].parts[${j}].functionCall.args: must be an object`;
        const signature = signatures.get(callKey(part.functionCall));
        if (signature !== undefined && part.thoughtSignature !== signature)
          return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly (contents[${i}].parts[${j}]).`;
        calls++;
        callNames.push(String(part.functionCall.name));
      }
      if (isObject(part.functionResponse)) {
        if (typeof part.functionResponse.name !== "string" || part.functionResponse.name === "")
          return `contents[${i}].parts[${j}].functionResponse.name: Name cannot be empty.`;
        if (!isObject(part.functionResponse.response)) return `contents[${i}].parts[${j}].functionResponse.response: must be an object`;
        if (!previous?.callNames.includes(part.functionResponse.name))
          return `contents[${i}].parts[${j}]: function response ${part.functionResponse.name} answers no call of the previous turn`;
        responses++;
      }
    }
    if (calls > 0 && previous && previous.role !== "user")
      return "Please ensure that function call turn comes immediately after a user turn or after a function response turn.";
    if (previous && previous.calls > 0 && responses !== previous.calls)
      return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
    previous = { role, calls, responses, callNames };
  }
  if (previous && previous.calls > 0) return "the last turn has function calls without function responses after them";
  return undefined;
}

function stream(res: ServerResponse, turn: WireTurn, index: number, model: string, signatures: Map<string, string>): void {
  const usage = turnUsage(turn, index);
  res.writeHead(200, { "content-type": "text/event-stream" });
  const base = { modelVersion: model, responseId: `resp_test${index}` };
  const send = (parts: Record<string, unknown>[], final: boolean) =>
    res.write(
      `data: ${JSON.stringify({
        candidates: [{ content: { parts, role: "model" }, index: 0, ...(final ? { finishReason: "STOP" } : {}) }],
        usageMetadata: final
          ? { promptTokenCount: usage.input, candidatesTokenCount: usage.output - 2, thoughtsTokenCount: 2, totalTokenCount: usage.input + usage.output }
          : { promptTokenCount: usage.input, totalTokenCount: usage.input },
        ...base,
      })}\r\n\r\n`,
    );
  const text = turn.text ?? "";
  const pieces = text ? [text.slice(0, Math.ceil(text.length / 2)), text.slice(Math.ceil(text.length / 2))] : [];
  const calls = (turn.calls ?? []).map((call, i) => {
    const functionCall = { name: call.name, args: call.input };
    if (i > 0) return { functionCall };
    const thoughtSignature = Buffer.from(`signature of turn ${index}`).toString("base64");
    signatures.set(callKey(functionCall), thoughtSignature);
    return { functionCall, thoughtSignature };
  });
  if (calls.length > 0) {
    for (const piece of pieces) send([{ text: piece }], false);
    send(calls, true);
  } else {
    pieces.forEach((piece, i) => send([{ text: piece }], i === pieces.length - 1));
  }
  res.end();
}

/** The outputs of the `functionResponse` parts of a request's last user turn, in order. */
export function geminiToolResults(body: unknown): string[] {
  const last = (body as { contents: { parts: { functionResponse?: { response: { output?: unknown; error?: unknown } } }[] }[] }).contents.at(-1);
  return (last?.parts ?? [])
    .filter((part) => part.functionResponse)
    .map((part) => String(part.functionResponse?.response.output ?? part.functionResponse?.response.error));
}

import { OpenAI } from "../../src/llm/openai.ts";
import { openAIToolResults, startCheckedOpenAIServer } from "../support/openai-wire-checks.ts";
import { describeProvider } from "../support/provider-scenarios.ts";

describeProvider("OpenAI", {
  start: (turns) => startCheckedOpenAIServer(turns),
  model: (server) => new OpenAI({ model: "gpt-4o-mini", apiKey: "test-key", baseURL: `${server.url}/v1` }),
  toolResults: openAIToolResults,
  answers: "text",
  schemaSent: (body) => (body as { response_format?: { json_schema?: { schema?: unknown } } }).response_format?.json_schema?.schema,
});

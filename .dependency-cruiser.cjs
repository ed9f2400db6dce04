// The layers of stepflow (docs/architecture.md explains them); `npm run lint` fails on an
// import that crosses one the wrong way. Type-only imports count: a type import still ties
// the layers' declarations together.

/** Everything but the engine core; the core (src/core/) imports none of it. */
const NOT_CORE = "^(src/(?!core/)|workflows/|events/)";

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "core-is-independent",
      comment: "The engine core (src/core/) runs workflows; tools, LLMs, journals, sessions, the CLI and the agent build on it, never the reverse.",
      severity: "error",
      from: { path: "^src/core/" },
      to: { path: NOT_CORE },
    },
    {
      name: "tools-below-llm",
      comment: "src/tools runs tool calls and hides secrets; LLM clients and the agent use it, not the other way.",
      severity: "error",
      from: { path: "^src/tools/" },
      to: { path: "^(src/(llm|journal|sessions|cli|server|compat)/|workflows/|events/)" },
    },
    {
      name: "llm-below-sessions-and-apps",
      comment: "src/llm talks to models; sessions, the CLI and the agent use it, not the other way.",
      severity: "error",
      from: { path: "^src/llm/" },
      to: { path: "^(src/(journal|sessions|cli|server|compat)/|workflows/|events/)" },
    },
    {
      name: "journal-below-llm-and-apps",
      comment: "The SQL journals record side effects for any workflow; they need a database driver, never an LLM or the agent.",
      severity: "error",
      from: { path: "^src/journal/" },
      to: { path: "^(src/(llm|cli|server|compat)/|workflows/|events/)" },
    },
    {
      name: "sessions-below-apps",
      comment: "Sessions store any workflow's runs; the agent supplies its own layout through their interface.",
      severity: "error",
      from: { path: "^src/sessions/" },
      to: { path: "^(src/(cli|server|compat)/|workflows/|events/)" },
    },
    {
      name: "dbos-beside-the-apps",
      comment:
        "src/dbos runs any workflow durably on DBOS; it uses the engine and the journals, never the agent, the CLI or a server, and nothing below the apps imports it, so DBOS stays out of their import graph.",
      severity: "error",
      from: { path: "^src/dbos/" },
      to: { path: "^(src/(cli|server|compat)/|workflows/|events/)" },
    },
    {
      name: "nothing-below-imports-dbos",
      comment: "DBOS is an optional dependency: the engine, tools, LLMs, journals, sessions, the agent and its events must load without it.",
      severity: "error",
      from: { path: "^(src/(core|tools|llm|journal|sessions|compat)/|workflows/|events/|src/index\\.ts$)" },
      to: { path: "^src/dbos/" },
    },
    {
      name: "workflows-and-events-below-cli",
      comment: "The CLI is one user of the agent and its events; they must work without it.",
      severity: "error",
      from: { path: "^(workflows|events|src/compat)/" },
      to: { path: "^src/(cli|server)/" },
    },
    {
      name: "otel-on-the-core-only",
      comment: "stepflow/otel turns the core's run observers into OpenTelemetry spans; it needs nothing else of stepflow, and nothing of stepflow needs it.",
      severity: "error",
      from: { path: "^src/otel/" },
      to: { path: "^(src/(?!core/|otel/)|workflows/|events/)" },
    },
    {
      name: "mcp-beside-tools",
      comment: "stepflow/mcp makes tools of MCP servers' tools; it builds on the core and src/tools, never on LLMs, sessions, the agent or the CLI.",
      severity: "error",
      from: { path: "^src/mcp/" },
      to: { path: "^(src/(?!core/|tools/|mcp/)|workflows/|events/)" },
    },
    {
      name: "web-page-is-browser-code",
      comment:
        "src/web/page/ runs in the browser and talks to the server over HTTP: it imports only itself, Mermaid and the client's JSON types, never Node code.",
      severity: "error",
      from: { path: "^src/web/page/" },
      to: { pathNot: "^(src/web/page/|src/client/types\\.ts$|node_modules/mermaid/|mermaid$)" },
    },
    {
      name: "web-below-server",
      comment: "src/web/ builds and finds the page; the server and the CLI serve it, not the other way.",
      severity: "error",
      from: { path: "^src/web/" },
      to: { path: "^(src/(cli|server|sessions|journal|llm|tools|compat)/|workflows/|events/)" },
    },
    {
      name: "client-runs-in-browsers",
      comment: "stepflow/client runs in browsers too: it may import its own files and the error classes, never the server, Node built-ins or packages.",
      severity: "error",
      from: { path: "^src/client/" },
      to: { pathNot: "^src/(client/|core/errors\\.ts$)" },
    },
    // No import cycles: files that import each other, directly or through others, are one
    // module in several files; split out what they share (as src/sqlite-thread/ is for the
    // session stores and the journals). A cycle that runs through the apps (the agent, its
    // events, the CLI, the server, DBOS) has an import the wrong way, which the rules above
    // report; these two catch the rest. src/core/ is left out until its run/context/workflow
    // cycle is taken apart: then drop the pathNot.
    {
      name: "no-circular",
      comment: "Files of one layer import each other in a circle: split out what they share.",
      severity: "error",
      from: { path: "^(src/[^/]+|workflows|events)/", pathNot: "^src/core/" },
      to: { circular: true, viaOnly: { path: "^$1/" } },
    },
    {
      name: "no-circular-below-the-apps",
      comment: "The layers below the apps import each other in a circle (as sessions and journal did): split out what they share.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(core|cli|server|dbos|compat)/" },
      to: { circular: true, viaOnly: { path: "^src/", pathNot: "^src/(core|cli|server|dbos|compat)/" } },
    },
    {
      name: "no-test-code-in-the-product",
      comment: "Tests and benchmarks are not shipped; nothing outside them may import them.",
      severity: "error",
      from: { pathNot: "^(test|bench)/" },
      to: { path: "^(test|bench)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};

// The layers of stepflow (docs/architecture.md explains them); `npm run lint` fails on an
// import that crosses one the wrong way. Type-only imports count: a type import still ties
// the layers' declarations together.

/** Folders outside the engine core; the core imports none of them. */
const NOT_CORE = "^(src/(llm|tools|sessions|cli|server|compat)/|workflows/|events/)";
/** The journal's interface and in-memory journal may join the core; the SQL journals may not. */
const SQL_JOURNAL = "^src/journal/(?!types\\.ts$|memory-journal\\.ts$)";

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "core-is-independent",
      comment: "The engine core (src/*.ts) runs workflows; LLMs, tools, sessions, the CLI and the agent build on it, never the reverse.",
      severity: "error",
      from: { path: "^src/[^/]+\\.ts$" },
      to: { path: [NOT_CORE, SQL_JOURNAL] },
    },
    {
      name: "journal-core-is-independent",
      comment: "src/journal/types.ts and memory-journal.ts may be imported by the core, so they follow the core's rule.",
      severity: "error",
      from: { path: "^src/journal/(types|memory-journal)\\.ts$" },
      to: { path: [NOT_CORE, SQL_JOURNAL] },
    },
    {
      name: "llm-below-sessions-and-apps",
      comment: "src/llm talks to models; sessions, the CLI and the agent use it, not the other way.",
      severity: "error",
      from: { path: "^src/llm/" },
      to: { path: "^(src/(sessions|cli|server)/|workflows/)" },
    },
    {
      name: "sessions-below-apps",
      comment: "Sessions store any workflow's runs; the agent supplies its own layout through their interface.",
      severity: "error",
      from: { path: "^src/sessions/" },
      to: { path: "^(src/(cli|server)/|workflows/)" },
    },
    {
      name: "workflows-and-events-below-cli",
      comment: "The CLI is one user of the agent and its events; they must work without it.",
      severity: "error",
      from: { path: "^(workflows|events)/" },
      to: { path: "^src/(cli|server)/" },
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

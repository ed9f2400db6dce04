#!/usr/bin/env bash
# The package as its users get it: `npm pack`, then the tarball installed into fresh projects
# under /tmp. Fails (naming the check) unless
#   - the tarball holds only the build (with the web page), the command, the license and the docs it needs;
#   - installing it prints no warning, and its footprint is printed (packages, MB);
#   - plain `node` runs an ES-module app (a workflow, the agent, a session store whose driver
#     is not installed, a workflow-core program on stepflow/compat, a server and its client) and a require() one, and the installed `stepflow` command answers;
#   - with their peer packages installed, stepflow/otel traces an agent run and stepflow/mcp
#     gives the agent an MCP server's tools;
#   - strict `tsc --noEmit` (exactOptionalPropertyTypes, verbatimModuleSyntax) passes with
#     moduleResolution nodenext and bundler, and with skipLibCheck off finds nothing in
#     stepflow's own declarations, those app.ts reaches and every entry point's (but the
#     optional peers' not installed);
#   - tsc's output runs under plain node: the TypeScript app with TC39 decorators and with
#     experimentalDecorators, and a CommonJS (.cts) one whose imports become require();
#   - esbuild bundles run: with its default target, an app using the package's `@step` classes
#     (the agent); with target node20, an app declaring its own `@step` workflow (esbuild keeps
#     decorators as written for its default target, esnext, which Node does not run yet);
#   - `stepflow/dbos` loads once its optional peer @dbos-inc/dbos-sdk is installed;
#   - publint and @arethetypeswrong/cli find no error;
#   - a provider's model class without its optional SDK names the package to install, and the
#     @llamaindex/anthropic installs next to stepflow with one @llamaindex/core.
# Uses the npm registry for the package's dependencies and the checking tools (pinned below).
#
#   bash .ci/consumer-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
fixtures=$repo/.ci/consumer
TYPESCRIPT=5.9.3 TYPES_NODE=20.19.25 ESBUILD=0.28.2 PUBLINT=0.3.25 ATTW=0.18.5
OTEL_API=1.9.1 OTEL_SDK=2.12.1 MCP_SDK=1.32.2 ZOD=^4.1.0

work=$(mktemp -d /tmp/stepflow-consumer.XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAILED  $*" >&2; failed=1; }
ok() { echo "ok      $*"; }
# npm's own line about this machine's npm configuration is not a warning about the package.
warnings_in() { grep -iE "warn|deprecated" "$1" | grep -vE 'Unknown (user|env) config' || true; }
npm_install() { npm install --no-audit --no-fund "$@"; }
# expect NAME EXPECTED_FILE COMMAND…: the command's stdout must be the file's lines, stderr empty.
expect() {
  local name=$1 expected=$2
  shift 2
  if "$@" >"$work/out" 2>"$work/err" && [ ! -s "$work/err" ] && diff -u "$expected" "$work/out" >"$work/diff"; then
    ok "$name"
  else
    fail "$name"; cat "$work/diff" "$work/err" >&2 2>/dev/null || true; cat "$work/out" >&2
  fi
}

echo "== npm pack (prepack builds dist/)"
npm pack --pack-destination "$work" --silent >"$work/pack.txt" 2>"$work/pack.err" || { cat "$work/pack.err" >&2; exit 1; }
tarball=$work/$(tail -n 1 "$work/pack.txt")
tar -tzf "$tarball" | sed 's|^package/||' | sort >"$work/files"
# dist/web/ is the server's web page: HTML, CSS, scripts and the licenses of what they bundle,
# each with its Brotli (.br) and gzip (.gz) copy.
unexpected=$(grep -vE '^(dist/.*\.(js|d\.ts)|dist/web/(index\.html|assets/[^/]+\.(js|css|LEGAL\.txt))(\.br|\.gz)?|bin/stepflow\.js|package\.json|README\.md|LICENSE|CHANGELOG\.md)$' "$work/files" || true)
if [ -z "$unexpected" ] && grep -qx LICENSE "$work/files" && grep -qx dist/src/index.js "$work/files" && grep -qx dist/web/index.html "$work/files" && grep -qx dist/web/assets/main.js "$work/files"; then
  ok "tarball: $(wc -l <"$work/files") files, $(du -k "$tarball" | cut -f1) kB packed"
else
  fail "tarball: unexpected or missing files"; echo "${unexpected:-(LICENSE, dist/src/index.js or the web page in dist/web/ missing)}" >&2
fi

echo "== install the tarball into a fresh project"
app=$work/app
mkdir -p "$app" && cd "$app"
echo '{ "name": "consumer", "private": true, "type": "module" }' >package.json
npm_install "$tarball" >"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; exit 1; }
warnings=$(warnings_in "$work/install.log")
if [ -z "$warnings" ]; then ok "install printed no warning"; else fail "install printed warnings:"; echo "$warnings" >&2; fi
packages=$(npm ls --all --parseable 2>/dev/null | tail -n +2 | sort -u | wc -l)
echo "footprint: $packages packages, $(du -sm node_modules | cut -f1) MB (node_modules of a project with only stepflow)"
node -e 'import("stepflow").then((m) => console.log(typeof m.Workflow))' >"$work/out" 2>&1
[ "$(cat "$work/out")" = function ] && ok 'node -e import("stepflow")' || { fail 'node -e import("stepflow")'; cat "$work/out" >&2; }

cp "$fixtures/app.mjs" "$fixtures/app.cjs" "$fixtures/app.ts" "$fixtures/app-commonjs.cts" "$fixtures"/tsconfig.*.json .
cat >"$work/mjs.expected" <<'OUT'
double: 42
agent: (2123 + 2321) * 312 = 1386528
SessionDriverMissingError: The SQLite session store needs the package @libsql/client, which is not installed. Install it next to stepflow: npm install @libsql/client
SessionDriverMissingError: The PostgreSQL session store needs the package pg, which is not installed. Install it next to stepflow: npm install pg
compat: 42
compat middleware: 42, once: 1, function
server: 6 * 7 = 42
OUT
expect "node app.mjs (ES module, no build step)" "$work/mjs.expected" node app.mjs
echo "require: function, 4 tools" >"$work/cjs.expected"
expect "node app.cjs (require)" "$work/cjs.expected" node app.cjs
echo "(2123 + 2321) * 312 = 1386528" >"$work/bin.expected"
if env -u OPENAI_API_KEY -u OPENAI_BASE_URL ./node_modules/.bin/stepflow "What is (2123 + 2321) * 312?" >"$work/out" 2>"$work/err" && diff -u "$work/bin.expected" "$work/out" >"$work/diff"; then
  ok "the stepflow command answers offline"
else
  fail "the stepflow command"; cat "$work/diff" "$work/err" "$work/out" >&2
fi

# A user's own workflows: a JavaScript module runs with nothing more installed; a TypeScript
# one, without the optional tsx, gets told to install it.
cat >flows.mjs <<'JS'
import { StartEvent, StopEvent, Workflow } from "stepflow";
export const greeting = new Workflow({ timeout: 10 });
greeting.addStep("greet", { accepts: [StartEvent], emits: [StopEvent] }, async (_ctx, ev) => new StopEvent({ result: `Hello, ${ev.name}!` }));
JS
if npx --no-install stepflow run ./flows.mjs --input '{"name":"Ada"}' >"$work/out" 2>"$work/err" && grep -q 'Hello, Ada!' "$work/out"; then
  ok "stepflow run ./flows.mjs (a user's JavaScript workflows)"
else
  fail "stepflow run ./flows.mjs"; cat "$work/err" "$work/out" >&2
fi
echo 'export const greeting = 1;' >flows.ts
npx --no-install stepflow run ./flows.ts >"$work/out" 2>&1 || true
if grep -q "tsx is not installed: add it to your project (npm install --save-dev tsx)" "$work/out"; then
  ok "stepflow run ./flows.ts without tsx says to install it"
else
  fail "stepflow run ./flows.ts without tsx"; cat "$work/out" >&2
fi

# A provider's model class without its optional SDK says which package to install.
node -e 'import("stepflow/llm/anthropic").then(({ Anthropic }) => new Anthropic({ apiKey: "unused" }).chat({ messages: [{ role: "user", content: "Hi" }] })).catch((e) => console.log(`${e.name}: ${e.message}`))' >"$work/out" 2>&1
if [ "$(cat "$work/out")" = "ProviderPackageMissingError: stepflow's Anthropic model needs the package @anthropic-ai/sdk, which is not installed. Install it next to stepflow: npm install @anthropic-ai/sdk" ]; then
  ok "stepflow/llm/anthropic without @anthropic-ai/sdk names the package to install"
else
  fail "stepflow/llm/anthropic without @anthropic-ai/sdk"; cat "$work/out" >&2
fi

echo "== a LlamaIndex provider adapter installed next to stepflow shares its @llamaindex/core"
adapters=$work/adapters
mkdir -p "$adapters" && cd "$adapters"
echo '{ "name": "consumer-adapters", "private": true, "type": "module" }' >package.json
if npm_install "$tarball" @llamaindex/anthropic >"$work/adapters.log" 2>&1; then
  # stepflow's @llamaindex/* ranges let the adapter and stepflow share one @llamaindex/core.
  # (npm may still pick an adapter older than the newest: it says which.)
  cores=$(npm ls @llamaindex/core --all --parseable 2>/dev/null | sort -u | wc -l)
  installed=$(node -p 'JSON.parse(require("node:fs").readFileSync("node_modules/@llamaindex/anthropic/package.json", "utf8")).version')
  newest=$(npm view @llamaindex/anthropic version 2>/dev/null || echo unknown)
  if [ "$cores" = 1 ]; then ok "npm install stepflow @llamaindex/anthropic: adapter $installed (newest $newest), one @llamaindex/core"; else fail "npm install stepflow @llamaindex/anthropic: adapter $installed (newest $newest), $cores copies of @llamaindex/core"; fi
else
  fail "npm install stepflow @llamaindex/anthropic"; cat "$work/adapters.log" >&2
fi
cd "$app"

echo "== the optional integrations (stepflow/otel, stepflow/mcp) with their peers installed"
integrations=$work/integrations
mkdir -p "$integrations" && cd "$integrations"
echo '{ "name": "consumer-integrations", "private": true, "type": "module" }' >package.json
npm_install "$tarball" "@opentelemetry/api@$OTEL_API" "@opentelemetry/sdk-trace-base@$OTEL_SDK" "@modelcontextprotocol/sdk@$MCP_SDK" "zod@$ZOD" >"$work/integrations.log" 2>&1 || { cat "$work/integrations.log" >&2; exit 1; }
cp "$fixtures/integrations.mjs" .
cat >"$work/integrations.expected" <<'OUT'
otel: chat offline-demo, execute_tool add, chat offline-demo, invoke_workflow FunctionCallingAgent
mcp: Hello, Ada!
OUT
expect "node integrations.mjs (stepflow/otel and stepflow/mcp)" "$work/integrations.expected" node integrations.mjs
cd "$app"

echo "== TypeScript $TYPESCRIPT and esbuild $ESBUILD in the project"
npm_install -D "typescript@$TYPESCRIPT" "@types/node@$TYPES_NODE" "esbuild@$ESBUILD" >"$work/tools.log" 2>&1 || { cat "$work/tools.log" >&2; exit 1; }
# entries.ts: a type-only import of every entry point in package.json's "exports".
node -e '
const { exports } = JSON.parse(require("node:fs").readFileSync("node_modules/stepflow/package.json", "utf8"));
const entries = Object.keys(exports).filter((key) => key !== "./package.json");
const lines = entries.map((key, i) => `import type * as entry${i} from "${key.replace(/^\./, "stepflow")}";`);
console.log([...lines, `export type Entries = [${entries.map((_, i) => `typeof entry${i}`).join(", ")}];`].join("\n"));
' >entries.ts
peers=$(node -p 'Object.keys(JSON.parse(require("node:fs").readFileSync("node_modules/stepflow/package.json", "utf8")).peerDependenciesMeta).join("|")')
for resolution in nodenext bundler; do
  if ./node_modules/.bin/tsc -p "tsconfig.$resolution.json" >"$work/out" 2>&1; then ok "tsc --noEmit, moduleResolution $resolution, strict + exactOptionalPropertyTypes"; else fail "tsc ($resolution)"; cat "$work/out" >&2; fi
  # With skipLibCheck off, tsc also checks every declaration file the app reaches: ours must be
  # clean, and every error must be in @llamaindex/*'s own declarations, the reason docs/providers.md
  # gives for keeping skipLibCheck on (they name ajv, which they do not install, and zod 3 types).
  ./node_modules/.bin/tsc -p "tsconfig.$resolution.json" --skipLibCheck false >"$work/out" 2>&1 || true
  ours=$(grep -E "^(app\.ts|node_modules/stepflow/)" "$work/out" || true)
  if [ -z "$ours" ]; then ok "tsc --skipLibCheck false ($resolution): no error in stepflow's declarations ($(grep -c "error TS" "$work/out" || true) in other packages)"; else fail "tsc --skipLibCheck false ($resolution)"; echo "$ours" >&2; fi
  elsewhere=$(grep "error TS" "$work/out" | grep -vE "^node_modules/@llamaindex/" || true)
  if [ -z "$elsewhere" ]; then ok "tsc --skipLibCheck false ($resolution): the other errors are all in @llamaindex/*, as docs/providers.md says"; else fail "tsc --skipLibCheck false ($resolution): errors outside @llamaindex/*"; echo "$elsewhere" >&2; fi
  # Every entry point's declarations, not only those app.ts reaches, with tsc's default `lib`
  # (whose DOM stream types differ from node:stream/web's under exactOptionalPropertyTypes). The
  # one error allowed in them: an optional peer this project did not install, whose types the
  # entry point of its integration imports (docs/providers.md).
  ./node_modules/.bin/tsc -p "tsconfig.entries.$resolution.json" >"$work/out" 2>&1 || true
  ours=$(grep -E "^(entries\.ts|node_modules/stepflow/)" "$work/out" | grep -vE "error TS2307: Cannot find module '($peers)(/[^']*)?'" || true)
  if [ -z "$ours" ]; then ok "tsc --skipLibCheck false ($resolution), every entry point: no error in stepflow's declarations but the optional peers not installed"; else fail "tsc --skipLibCheck false ($resolution), every entry point"; echo "$ours" >&2; fi
done
if ./node_modules/.bin/esbuild app.mjs --bundle --platform=node --format=esm --outfile=bundle-default.mjs --log-level=warning >"$work/out" 2>&1; then
  expect "esbuild bundle, default target, of an app running the agent's @step workflow" "$work/mjs.expected" node bundle-default.mjs
else
  fail "esbuild bundle (default target)"; cat "$work/out" >&2
fi
cat >"$work/ts.expected" <<'OUT'
Why did the chicken cross the road? (joke #1)
Why did the duck cross the road? (joke #2)
(2123 + 2321) * 312 = 1386528 (streamed: true)
function function function function
server: succeeded
OUT
if ./node_modules/.bin/esbuild app.ts --bundle --platform=node --format=esm --target=node20 --outfile=bundle.mjs --log-level=warning >"$work/out" 2>&1; then
  expect "esbuild bundle, target node20, of an app with its own @step workflow" "$work/ts.expected" node bundle.mjs
else
  fail "esbuild bundle (target node20)"; cat "$work/out" >&2
fi

# tsc's own output run by plain node, as a project that builds with tsc runs it: app.ts with
# TC39 decorators (lowered by tsc for target ES2022) and with experimentalDecorators; and a
# CommonJS file (.cts), whose imports tsc turns into require() calls.
for decorators in standard legacy; do
  legacy=false
  [ "$decorators" = legacy ] && legacy=true
  if ./node_modules/.bin/tsc -p tsconfig.nodenext.json --noEmit false --outDir "tsc-$decorators" --experimentalDecorators "$legacy" >"$work/out" 2>&1; then
    expect "tsc, $decorators decorators, then node" "$work/ts.expected" node "tsc-$decorators/app.js"
  else
    fail "tsc ($decorators decorators)"; cat "$work/out" >&2
  fi
done
printf '%s\n' "commonjs: Hello, Ada!" "commonjs agent: 6 * 7 = 42" >"$work/commonjs.expected"
if ./node_modules/.bin/tsc -p tsconfig.commonjs.json >"$work/out" 2>&1; then
  expect "tsc, CommonJS (.cts, module nodenext), then node" "$work/commonjs.expected" node tsc-commonjs/app-commonjs.cjs
else
  fail "tsc (CommonJS)"; cat "$work/out" >&2
fi

echo "== stepflow/dbos, with its optional peer @dbos-inc/dbos-sdk installed"
cd "$app"
npm_install "@dbos-inc/dbos-sdk@^5.3.0" >"$work/dbos-install.log" 2>&1 || { cat "$work/dbos-install.log" >&2; exit 1; }
echo "DbosWorker: function, DbosRuns: function" >"$work/dbos.expected"
expect 'import("stepflow/dbos")' "$work/dbos.expected" node -e 'import("stepflow/dbos").then((m) => console.log(`DbosWorker: ${typeof m.DbosWorker}, DbosRuns: ${typeof m.DbosRuns}`))'

echo "== publint $PUBLINT and @arethetypeswrong/cli $ATTW"
mkdir -p "$work/tools" "$work/extracted" && cd "$work/tools"
echo '{ "private": true }' >package.json
npm_install "publint@$PUBLINT" "@arethetypeswrong/cli@$ATTW" >"$work/lint-tools.log" 2>&1 || { cat "$work/lint-tools.log" >&2; exit 1; }
tar -xzf "$tarball" -C "$work/extracted"
if ./node_modules/.bin/publint --strict "$work/extracted/package" >"$work/out" 2>&1; then ok "publint"; else fail "publint"; fi
cat "$work/out"
# node16 (Node's resolution for import and require) and bundler; not node10, which predates
# "exports". require() reaches the ES modules on purpose: Node 20.19+ loads them (app.cjs above).
if ./node_modules/.bin/attw "$tarball" --profile node16 --ignore-rules cjs-resolves-to-esm --format table-flipped >"$work/out" 2>&1; then ok "arethetypeswrong"; else fail "arethetypeswrong"; fi
cat "$work/out"

if [ "$failed" -ne 0 ]; then echo "consumer-check: FAILED" >&2; exit 1; fi
echo "consumer-check: passed"

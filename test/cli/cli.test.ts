import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { maskCredentials } from "../../src/core/user-text.ts";
import { openSessionStore } from "../../src/sessions/open-store.ts";
import { startOpenAIServer } from "../support/openai-sse-server.ts";
import { runCli as cli } from "../support/cli-process.ts";
import type { CliResult } from "../support/cli-process.ts";

const CLI = join(import.meta.dirname, "..", "..", "src", "cli", "main.ts");
const SECRET = "sk-test-DO-NOT-PRINT-7f3a9c";

describe("stepflow CLI (offline demo model)", { timeout: 180_000 }, () => {
  it("answers one question on stdout and exits 0", async () => {
    const { code, stdout, stderr } = await cli(["What is (2123 + 2321) * 312?"]);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe("(2123 + 2321) * 312 = 1386528");
    expect(stderr).toContain("Using the offline demo model");
    expect(stderr).toContain('add({"x":2123,"y":2321}) → 4444');
    expect(stderr).toContain('multiply({"x":4444,"y":312}) → 1386528');
  });

  it("keeps the conversation across lines of a piped stdin chat", async () => {
    const { code, stdout } = await cli([], { stdin: "Hello! My name is Logan.\nWhat is my name?\n/exit\n" });
    expect(code).toBe(0);
    expect(stdout).toContain("Nice to meet you, Logan!");
    expect(stdout.trim().split("\n").at(-1)).toBe("Your name is Logan.");
  });

  it("reports a failed turn of a piped chat in one line and goes on; the chat then exits 1", async () => {
    const tooLong = Array.from({ length: 30 }, (_, i) => i + 1).join(" + "); // 29 dependent adds: more than maxIterations (20) LLM calls
    const { code, stdout, stderr } = await cli([], { stdin: `${tooLong}\nWhat is 2 + 2?\n` });
    expect(stderr).toContain("stepflow: FunctionCallingAgent stopped after 20 LLM calls");
    expect(stdout.trim().split("\n").at(-1)).toBe("2 + 2 = 4");
    expect(code).toBe(1);
  });

  it("ends quietly with exit 0 when the reader of stdout has gone", async () => {
    const { code, stderr } = await cli(["--json", "What is 2 + 2?"], { closeStdout: true });
    expect(stderr).not.toContain("EPIPE");
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(code).toBe(0);
  });

  it("prints { response, sources } with --json", async () => {
    const { code, stdout } = await cli(["--json", "What is (2123 + 2321) * 312?"]);
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result.response).toEqual({ role: "assistant", content: "(2123 + 2321) * 312 = 1386528" });
    expect(result.sources.map((s: { toolName: string; output: unknown }) => [s.toolName, s.output])).toEqual([
      ["add", 4444],
      ["multiply", 1386528],
    ]);
  });

  it("prints the step trace with --verbose", async () => {
    const { code, stderr } = await cli(["--verbose", "What is 2 * 3?"]);
    expect(code).toBe(0);
    expect(stderr).toContain("Running step handleToolCalls");
    // Each tool call once: the turn's own line, not the agent's "Invoking:"/"Got output:" too.
    expect(stderr.match(/multiply/g)).toHaveLength(1);
    expect(stderr).toContain('↳ multiply({"x":2,"y":3}) → 6');
    expect(stderr).not.toContain("Invoking:");
  });

  it("the installed command's hints name the command itself, not npm start", () => {
    // bin/stepflow.js runs the build that `npm test` makes first.
    const bin = join(import.meta.dirname, "..", "..", "bin", "stepflow.js");
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1" };
    const bogus = spawnSync(process.execPath, [bin, "--bogus"], { env, encoding: "utf8" });
    expect(bogus.status).toBe(2);
    expect(bogus.stderr).toBe("stepflow: unknown option '--bogus'. Run stepflow --help for the options.\n");
    const empty = spawnSync(process.execPath, [bin, "--store", "memory:", "sessions", "list"], { env, encoding: "utf8" });
    expect(empty.stdout).toBe("No sessions yet. Start one with: stepflow --session NAME\n");
  });

  it.each([
    [["--bogus"], "stepflow: unknown option '--bogus'. Run npm start -- --help for the options."],
    [["--model"], "stepflow: option '-m, --model <name>' argument missing. Run npm start -- --help for the options."],
    [["--llm", "claude"], "stepflow: option '--llm <kind>' argument 'claude' is invalid. Allowed choices are offline, openai."],
    [
      ["--llm", "openai", "hi"],
      "stepflow: --llm openai needs OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL (for an OpenAI-compatible server such as Ollama).",
    ],
    [["--model", "gpt 4o", "hi"], 'stepflow: --model "gpt 4o" is not a model name. Use a name like gpt-4o-mini or llama3.1:8b.'],
  ])("exits 2 with one line for the usage error %j", async (args, message) => {
    const { code, stdout, stderr } = await cli(args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr.trim().split("\n").at(-1)).toContain(message);
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  // Ten processes at once: on a two-core machine as slow as ten in a row, hence the longer timeout.
  it("exits 2 with exactly one line for each usage mistake, echoing at most 40 characters of a value", { timeout: 120_000 }, async () => {
    const store = "Use sqlite:PATH (default sqlite:.stepflow/sessions.db), postgres://USER:PASSWORD@HOST:PORT/DB, or memory:.";
    const cases: [string[], Record<string, string>, string][] = [
      [
        ["--llm", "foo", "hi"],
        {},
        "stepflow: option '--llm <kind>' argument 'foo' is invalid. Allowed choices are offline, openai. Run npm start -- --help for the options.",
      ],
      [
        ["draw", "flows.ts", "orders", "extra"],
        {},
        "stepflow: too many arguments for 'draw'. Expected 2 arguments but got 3. Run npm start -- --help for the options.",
      ],
      [
        ["draw", "extra"],
        {},
        `stepflow: There is no file extra (looked for ${join(import.meta.dirname, "..", "..", "extra")}). Give the path of a .ts or .js module that exports your workflows.`,
      ],
      [["sessions", "lst"], {}, "stepflow: unknown command 'lst'. Did you mean list? Run npm start -- --help for the options."],
      [["--session", "", "hi"], {}, 'stepflow: A session id must be 1 to 200 characters without control characters; got "".'],
      [
        ["--session", "a".repeat(5000), "hi"],
        {},
        `stepflow: A session id must be 1 to 200 characters without control characters; got "${"a".repeat(40)}…" (5000 characters).`,
      ],
      [["sessions", "show", "a\tb"], {}, 'stepflow: A session id must be 1 to 200 characters without control characters; got "a\\tb".'],
      [["--store", "bogus:x", "--session", "a", "hi"], {}, `stepflow: Unknown session store "bogus:x". ${store}`],
      [["--store", "sqlite:", "--session", "a", "hi"], {}, `stepflow: Unknown session store "sqlite:". ${store}`],
      [["sessions", "--store", "mysql://bob:pw-SECRET456@db/app", "list"], {}, `stepflow: Unknown session store "mysql://bob:***@db/app". ${store}`],
      [
        ["hi"],
        { OPENAI_BASE_URL: "127.0.0.1:11434/v1" },
        'stepflow: OPENAI_BASE_URL must be an http:// or https:// URL such as http://localhost:11434/v1; got "127.0.0.1:11434/v1".',
      ],
      [
        ["hi"],
        { OPENAI_BASE_URL: "bob:pw-SECRET456@localhost:11434/v1" },
        'stepflow: OPENAI_BASE_URL must be an http:// or https:// URL such as http://localhost:11434/v1; got "bob:***@localhost:11434/v1".',
      ],
      [
        ["hi"],
        { OPENAI_BASE_URL: "http://bob:pw-SECRET456@127.0.0.1:9/v1" },
        'stepflow: OPENAI_BASE_URL must not contain a user or password (got "http://bob:***@127.0.0.1:9/v1"): Node\'s fetch refuses such URLs. Put the key in OPENAI_API_KEY.',
      ],
      [["--json"], {}, 'stepflow: --json needs a question: npm start -- --json "What is 2 + 2?"'],
      [
        ["hi"],
        { OPENAI_BASE_URL: "http:/bob:pw-SECRET456@127.0.0.1:9/v1" },
        'stepflow: OPENAI_BASE_URL must not contain a user or password (got "http:/bob:***@127.0.0.1:9/v1"): Node\'s fetch refuses such URLs. Put the key in OPENAI_API_KEY.',
      ],
    ];
    // In parallel: each is a process start.
    const results = await Promise.all(cases.map(([args, env]) => cli(args, { env })));
    results.forEach(({ code, stdout, stderr }, i) => {
      const [args, , line] = cases[i] as (typeof cases)[number];
      expect({ args, code, stdout, stderr }).toEqual({ args, code: 2, stdout: "", stderr: `${line}\n` });
    });
  });

  it.each([
    [
      ["hi"],
      { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "sk-SECRET\u2026456" },
      "stepflow: OPENAI_API_KEY has a character that cannot be sent in an HTTP header (character 10 of 13 is U+2026). Copy the value again; an editor may have put in a curly quote, a dash or a line break.",
    ],
    [
      ["hi"],
      { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_ORG_ID: "org-\u201cx\u201d" },
      "stepflow: OPENAI_ORG_ID has a character that cannot be sent in an HTTP header (character 5 of 7 is U+201C). Copy the value again; an editor may have put in a curly quote, a dash or a line break.",
    ],
    [
      ["hi"],
      { OPENAI_BASE_URL: "  \t" },
      'stepflow: OPENAI_BASE_URL is set but blank ("  \\t"). Set it to the server\'s URL, such as http://localhost:11434/v1, or unset it.',
    ],
  ] as [string[], Record<string, string>, string][])("exits 2 naming the setting that cannot work, never its value (case %#)", async (args, env, line) => {
    expect(await cli(args, { env })).toEqual({ code: 2, stdout: "", stderr: `${line}\n` });
  });

  it("refuses a session id that is not valid UTF-8 rather than storing it as U+FFFD", async () => {
    // Through a shell: spawn() can only pass valid UTF-8, and the bad byte must reach the CLI's argv as is.
    const { code, stdout, stderr } = await new Promise<CliResult>((resolve, reject) => {
      const child = spawn("/bin/sh", ["-c", `exec "$0" --import tsx "$1" --store memory: --session "$(printf 'al\\377ice')" hi`, process.execPath, CLI], {
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1" },
        cwd: join(import.meta.dirname, "..", ".."),
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d));
      child.stderr.on("data", (d: Buffer) => (err += d));
      child.on("error", reject);
      child.on("close", (exit) => resolve({ code: exit, stdout: out, stderr: err }));
      child.stdin.end();
    });
    expect({ code, stdout, stderr }).toEqual({
      code: 2,
      stdout: "",
      stderr:
        'stepflow: A session id must be valid UTF-8; got "al\ufffdice", where U+FFFD (\ufffd) stands for bytes that are not. Use a UTF-8 terminal, or another id.\n',
    });
  });

  it("shows the sessions subcommands when none is given (exit 2), and prints --version", async () => {
    const [missing, unknown, version] = await Promise.all([cli(["sessions"]), cli(["sessions", "help", "bogus"]), cli(["--version"])]);
    for (const { code, stdout, stderr } of [missing, unknown]) {
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr).toMatch(/^Usage: stepflow sessions \[options\] \[command\]\n/);
      expect(stderr).toContain("show [options] <id>  the messages of a session, or one page of them");
      expect(stderr).not.toContain("outputHelp");
    }
    expect(version).toEqual({
      code: 0,
      stdout: `${JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "package.json"), "utf8")).version}\n`,
      stderr: "",
    });
  });

  it("draws the agent as Mermaid, and as an HTML page", async () => {
    const { code, stdout } = await cli(["draw"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^flowchart/);
    expect(stdout).toContain("handleToolCalls");
    const file = join(mkdtempSync(join(tmpdir(), "stepflow-draw-")), "agent.html");
    expect((await cli(["draw", "--html", file])).code).toBe(0);
    expect(readFileSync(file, "utf8")).toContain('<pre class="mermaid">');
  });
});

describe("stepflow CLI with an OpenAI-compatible server", { timeout: 180_000 }, () => {
  it("uses OPENAI_BASE_URL and shows the server's reply, sending the key only as a header", async () => {
    const server = await startOpenAIServer({
      turns: [{ text: "Hello from the test server.", usage: { prompt_tokens: 1210, completion_tokens: 7, cached_tokens: 1024 } }],
    });
    try {
      const { code, stdout, stderr } = await cli(["--verbose", "Hello!"], { env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: SECRET } });
      expect(code).toBe(0);
      expect(stdout.trim()).toBe("Hello from the test server.");
      expect(stderr).toContain(`Using gpt-4o-mini at ${server.baseURL}`);
      // --verbose shows what each LLM call took, as the server reported it, and the tool specs' share counted locally.
      expect(stderr).toMatch(/Tokens of LLM call 1: prompt 1,210 \(1,024 cached\), completion 7; tool specs \d+ \(\d+ tools\)/);
      expect(server.requests[0]?.body).toMatchObject({ model: "gpt-4o-mini", stream: true });
      expect(stdout + stderr).not.toContain(SECRET);
    } finally {
      await server.close();
    }
  });

  it("prints a reply without the terminal control sequences in it, even split across chunks", async () => {
    const reply = ["Done", "\x1b]0;ow", "ned\x07. \x1b[", "2J\x1b[1;1HAll", " \x1b]52;c;cm0=\x1b", "\\good\r\x07."];
    const server = await startOpenAIServer({ turns: [{ text: reply }] });
    try {
      const { code, stdout, stderr } = await cli(["Hello!"], { env: { OPENAI_BASE_URL: server.baseURL } });
      expect(code).toBe(0);
      expect(stdout).toBe("Done. All good.\n");
      // eslint-disable-next-line no-control-regex -- the test is that no control character reaches the terminal
      expect(stderr).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    } finally {
      await server.close();
    }
  });

  it("prints a server's error message without its control sequences, also in the --verbose stack trace", async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "boom\x1b]0;owned\x07 \x1b[2Jhere" } }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const { code, stderr } = await cli(["--verbose", "Hello!"], { env: { OPENAI_BASE_URL: baseURL } });
      expect(code).toBe(1);
      expect(stderr).toContain(`stepflow: The server at ${baseURL} answered 500: boom here.\n`);
      // eslint-disable-next-line no-control-regex -- the test is that no control character reaches the terminal
      expect(stderr).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("reports a 401 in one line without the key, also with --verbose", async () => {
    const server = await startOpenAIServer({ turns: [], status: 401 });
    try {
      for (const extra of [[], ["--verbose"]]) {
        const { code, stdout, stderr } = await cli([...extra, "Hello!"], { env: { OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: SECRET } });
        expect(code).toBe(1);
        expect(stderr).toContain(`stepflow: The server at ${server.baseURL} rejected the API key (401). Check OPENAI_API_KEY.`);
        expect(stdout + stderr).not.toContain(SECRET);
      }
    } finally {
      await server.close();
    }
  });

  it("reports an unreachable server in one line", async () => {
    const server = await startOpenAIServer({ turns: [] });
    const baseURL = server.baseURL;
    await server.close(); // nothing listens there any more
    const { code, stderr } = await cli(["--verbose", "Hello!"], { env: { OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: SECRET } });
    expect(code).toBe(1);
    expect(stderr).toContain(`Using gpt-4o-mini at ${baseURL}.\n`);
    expect(stderr).toContain(`stepflow: Cannot reach the OpenAI-compatible server at ${baseURL}`);
    expect(stderr).not.toContain(SECRET);
  });
});

describe("stepflow CLI on a terminal", { timeout: 180_000 }, () => {
  // script(1) with util-linux's flags (Linux; macOS's script takes others).
  it.skipIf(process.platform !== "linux")("cancels the turn on Ctrl-C, keeps chatting, and quits on a second Ctrl-C", async () => {
    // A model server that takes the request and never answers: the turn waits until cancelled.
    const silent = createServer((req) => req.resume());
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const baseURL = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
    // script(1) gives the CLI a pseudo-terminal, so it chats interactively and Ctrl-C is a real SIGINT.
    const child = spawn("script", ["-qfec", `${process.execPath} --import tsx ${CLI}`, "/dev/null"], {
      cwd: join(import.meta.dirname, "..", ".."),
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1", TERM: "dumb", OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: SECRET },
    });
    let screen = "";
    const waiters: { until: () => boolean; resolve: () => void }[] = [];
    child.stdout.on("data", (d: Buffer) => {
      screen += String(d);
      for (const w of waiters.filter((w) => w.until())) w.resolve();
    });
    const when = (until: () => boolean) => new Promise<void>((resolve) => (until() ? resolve() : waiters.push({ until, resolve })));
    const prompts = () => screen.split("you › ").length - 1;
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      await when(() => prompts() >= 1);
      child.stdin.write("Hello there\r");
      await when(() => screen.includes("thinking"));
      child.stdin.write("\x03"); // Ctrl-C during the turn
      await when(() => screen.includes("(cancelled)") && prompts() >= 2); // the turn ended, the chat goes on
      child.stdin.write("\x03"); // Ctrl-C at the prompt
      expect(await exited).toBe(0);
      expect(screen).not.toContain(SECRET);
    } finally {
      child.kill();
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it.skipIf(process.platform !== "linux")("colours stderr only when stderr is a terminal, whatever stdout is", async () => {
    const dir = mkdtempSync(join(tmpdir(), "stepflow-colour-"));
    const run = `${process.execPath} --import tsx ${CLI} 'What is 2 * 3?'`;
    // One pseudo-terminal, two runs: stderr to a file (stdout on the terminal), then stdout to a file (stderr on the terminal).
    const child = spawn("script", ["-qfec", `${run} 2>${dir}/err.txt; ${run} >${dir}/out.txt`, "/dev/null"], {
      cwd: join(import.meta.dirname, "..", ".."),
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", TERM: "xterm" }, // no NO_COLOR
    });
    let screen = "";
    child.stdout.on("data", (d: Buffer) => (screen += String(d)));
    expect(await new Promise((resolve) => child.on("close", resolve))).toBe(0);
    const err = readFileSync(join(dir, "err.txt"), "utf8");
    expect(err).toContain("multiply");
    expect(err).not.toContain("\x1b["); // a log file gets no escape codes
    expect(screen).toContain("\x1b[1mmultiply\x1b[22m"); // the terminal gets colours
    expect(readFileSync(join(dir, "out.txt"), "utf8")).toBe("2 * 3 = 6\n");
  });
});

describe("stepflow CLI sessions", { timeout: 180_000 }, () => {
  it("leaves everything in sessions.db when it exits, so a copy of that one file is a full backup", async () => {
    const dir = mkdtempSync(join(tmpdir(), "stepflow-cli-"));
    expect((await cli(["--session", "alice", "--store", `sqlite:${join(dir, "sessions.db")}`, "My name is Logan."])).code).toBe(0);
    const backup = mkdtempSync(join(tmpdir(), "stepflow-backup-"));
    copyFileSync(join(dir, "sessions.db"), join(backup, "sessions.db")); // the file alone, without -wal and -shm
    const list = await cli(["sessions", "--store", `sqlite:${join(backup, "sessions.db")}`, "list"]);
    expect(list.stdout).toMatch(/^alice\t2 messages\tupdated /);
  });

  it("continues a session in a second process, then lists, shows and deletes it", async () => {
    const store = `sqlite:${join(mkdtempSync(join(tmpdir(), "stepflow-cli-")), "sessions.db")}`;
    expect((await cli(["--session", "alice", "--store", store, "My name is Logan."])).stdout.trim()).toBe("Nice to meet you, Logan!");
    expect((await cli(["--session", "alice", "--store", store, "What is my name?"])).stdout.trim()).toBe("Your name is Logan.");

    const list = await cli(["sessions", "--store", store, "list"]);
    expect(list.stdout).toMatch(/^alice\t4 messages\tupdated \d{4}-\d\d-\d\dT/);
    const show = await cli(["sessions", "--store", store, "show", "alice"]);
    expect(
      show.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => line.replace(/^\S+ {2}/, "")),
    ).toEqual(["user: My name is Logan.", "assistant: Nice to meet you, Logan!", "user: What is my name?", "assistant: Your name is Logan."]);
    expect((await cli(["sessions", "--store", store, "delete", "alice"])).stdout).toBe('Deleted session "alice".\n');
    const gone = await cli(["sessions", "--store", store, "show", "alice"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('stepflow: There is no session "alice". List them with: npm start -- sessions list');
  });
});

describe("stepflow sessions list on a store a server shares", { timeout: 180_000 }, () => {
  it("refuses to start a conversation under a server's prefix, before the first message, and lists nothing new", async () => {
    const store = `sqlite:${join(mkdtempSync(join(tmpdir(), "stepflow-cli-")), "sessions.db")}`;
    const refused = await cli(["--session", "handler:notes", "--store", store, "My name is Logan."]);
    expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 2, stdout: "" });
    expect(refused.stderr).toContain('stepflow: Session id "handler:notes" starts with "handler:", which a stepflow server keeps for its own records');
    expect(refused.stderr).toContain('Give the conversation another id, such as "notes".');
    expect((await cli(["sessions", "--store", store, "list", "--all"])).stdout).toBe("No sessions yet. Start one with: npm start -- --session NAME\n");
  });

  it("lists the conversations, and a server's runs and keys too with --all", async () => {
    const store = `sqlite:${join(mkdtempSync(join(tmpdir(), "stepflow-cli-")), "sessions.db")}`;
    // What a WorkflowServer on this store keeps: a run, its checkpoints, and an Idempotency-Key.
    const server = await openSessionStore(store);
    const serverIds = ["handler:7f3a9c", "handler:7f3a9c:checkpoints", `idempotency:${"ab".repeat(32)}`];
    try {
      for (const id of serverIds) await server.save(id, { expectedVersion: 0, snapshot: "{}", append: [] });
    } finally {
      await server.close();
    }
    const only = await cli(["sessions", "--store", store, "list"]);
    expect(only.stdout).toBe(
      "No conversations yet; the store holds 3 sessions of a stepflow server (its runs and keys): list them with: npm start -- sessions list --all\n",
    );

    expect((await cli(["--session", "alice", "--store", store, "My name is Logan."])).code).toBe(0);
    const list = await cli(["sessions", "--store", store, "list"]);
    expect(list.stdout).toMatch(/^alice\t2 messages\tupdated \S+\n$/);
    expect(list.stderr).toBe(
      "Left out: 3 sessions of a stepflow server (ids starting handler: or idempotency:). List every session with: npm start -- sessions list --all\n",
    );
    const all = await cli(["sessions", "--store", store, "list", "--all"]);
    expect(
      all.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split("\t")[0])
        .sort(),
    ).toEqual(["alice", ...serverIds].sort());
  });
});

describe("stepflow sessions show --page", { timeout: 180_000 }, () => {
  it("shows one page of the history, oldest first, and says which page and what is next", async () => {
    const store = `sqlite:${join(mkdtempSync(join(tmpdir(), "stepflow-cli-")), "sessions.db")}`;
    await cli(["--session", "pat", "--store", store, "My name is Pat."]);
    await cli(["--session", "pat", "--store", store, "What is 2 + 3?"]); // 6 messages
    const page = await cli(["sessions", "--store", store, "show", "pat", "--page", "2", "--page-size", "4"]);
    expect(page.code).toBe(0);
    expect(
      page.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => line.replace(/^\S+ {2}/, "")),
    ).toEqual(["tool: 5", "assistant: 2 + 3 = 5"]);
    expect(page.stderr).toContain("Page 2 of 2 (messages 5–6 of 6).");
    const first = await cli(["sessions", "--store", store, "show", "pat", "--page", "1", "--page-size", "4"]);
    expect(first.stdout.split("\n").filter(Boolean)).toHaveLength(4);
    expect(first.stderr).toContain("Page 1 of 2 (messages 1–4 of 6). Next: npm start -- sessions show pat --page 2 --page-size 4");
    const past = await cli(["sessions", "--store", store, "show", "pat", "--page", "3", "--page-size", "4"]);
    expect([past.code, past.stdout]).toEqual([2, ""]);
    expect(past.stderr).toContain('stepflow: Session "pat" has 2 pages of 4 messages (6 in all); there is no page 3.');
    const bad = await cli(["sessions", "--store", store, "show", "pat", "--page", "x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('stepflow: --page takes a whole number ≥ 1 (page 1 is the oldest messages); got "x".');
  });
});

/** Makes `path` unwritable even for root (CI runs as root, where chmod does not stop writes); false where chattr cannot. */
function makeImmutable(path: string): boolean {
  return spawnSync("chattr", ["+i", path]).status === 0;
}

describe("stepflow CLI session store errors name the store, not the model server", { timeout: 180_000 }, () => {
  const modelServer = { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }; // set, as in the report; never reached

  it("explains a store path whose folder is a file", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "stepflow-cli-")), "notes.txt");
    writeFileSync(file, "");
    const { code, stderr } = await cli(["--session", "a", "--store", `sqlite:${file}/x.db`, "Hi"], { env: modelServer });
    expect(code).toBe(1);
    expect(stderr).toContain(`stepflow: Cannot open the session store SQLite ${file}/x.db: ${file} is a file, not a folder. Choose another path.\n`);
    expect(stderr).not.toContain("OPENAI_BASE_URL");
  });

  it("explains a store path that is a folder", async () => {
    const dir = mkdtempSync(join(tmpdir(), "stepflow-cli-"));
    const { code, stderr } = await cli(["sessions", "--store", `sqlite:${dir}`, "list"], { env: modelServer });
    expect(code).toBe(1);
    expect(stderr).toBe(`stepflow: Cannot open the session store SQLite ${dir}: it is a folder. Name a file in it, such as ${join(dir, "sessions.db")}.\n`);
  });

  it("explains a new store in a folder it may not write to", async (context) => {
    const dir = mkdtempSync(join(tmpdir(), "stepflow-cli-"));
    if (!makeImmutable(dir)) return context.skip("chattr +i is not available here (it needs ext4-like file attributes and CAP_LINUX_IMMUTABLE)");
    try {
      const { code, stderr } = await cli(["--session", "a", "--store", `sqlite:${dir}/s.db`, "Hi"], { env: modelServer });
      expect(code).toBe(1);
      expect(stderr).toMatch(
        new RegExp(
          `stepflow: Cannot open the session store SQLite ${dir}/s\\.db: SQLite cannot create or write the file \\(.*\\)\\. Check that you may write to ${dir} \\(SQLite also creates s\\.db-wal and s\\.db-shm there\\), or choose another path\\.\n`,
        ),
      );
      expect(stderr).not.toContain("OPENAI_BASE_URL");
    } finally {
      spawnSync("chattr", ["-i", dir]);
    }
  });
});

describe("passwords in URLs the CLI repeats", () => {
  it("are masked in every form a URL parser accepts, and in mistyped URLs", () => {
    const cases: [string, string][] = [
      ["http://bob:pw@host/v1", "http://bob:***@host/v1"],
      ["mysql://:s3cret@h/db", "mysql://:***@h/db"],
      ['mysql://bob:pa"ss@h/db', "mysql://bob:***@h/db"],
      ["http:/bob:s3cret@127.0.0.1:9/v1", "http:/bob:***@127.0.0.1:9/v1"],
      ["http:\\\\bob:s3cret@h", "http:\\\\bob:***@h"],
      ["bob:s3cret@localhost:11434/v1", "bob:***@localhost:11434/v1"],
      ["http//bob:s3cret@localhost/v1", "http//bob:***@localhost/v1"],
      ["http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"],
      ["host=db password=s3cret user=bob", "host=db password=*** user=bob"],
      ["host=db password = 'a b\\'c' user=bob", "host=db password = *** user=bob"],
      ["postgres://h/db?password=s3cret", "postgres://h/db?password=***"],
    ];
    expect(cases.map(([url]) => maskCredentials(url))).toEqual(cases.map(([, masked]) => masked));
  });
});

import { describe, expect, it } from "vitest";
import { TraceLines } from "../../src/cli/trace-lines.ts";

/** One screen: what stdout and stderr wrote, in order. */
function screen() {
  let text = "";
  const stream = { write: (t: string) => ((text += t), true), columns: 80 };
  return { stdout: stream, stderr: { write: (t: string) => ((text += t), true) }, text: () => text };
}

describe("TraceLines (--verbose)", () => {
  it("holds a trace line back while the reply's line is open, and writes it once the line ends", () => {
    const s = screen();
    const lines = new TraceLines(s.stdout, s.stderr);
    lines.trace("Running step handleLlmInput\n");
    lines.out.write("2 + 3 ");
    lines.trace("Step handleLlmInput produced event StopEvent\n");
    lines.out.write("= 5");
    expect(s.text()).toBe("Running step handleLlmInput\n2 + 3 = 5");
    lines.out.write("\n");
    expect(s.text()).toBe("Running step handleLlmInput\n2 + 3 = 5\nStep handleLlmInput produced event StopEvent\n");
  });

  it("writes what is held when flushed, and passes everything else of stdout through", () => {
    const s = screen();
    const lines = new TraceLines(s.stdout, s.stderr);
    lines.out.write("no newline");
    lines.trace("held\n");
    lines.flush();
    expect(s.text()).toBe("no newlineheld\n");
    expect(lines.out.columns).toBe(80);
  });
});

import { describe, expect, it } from "vitest";
import { TerminalTextFilter, terminalSafe, terminalWriter } from "../../src/cli/terminal-text.ts";

describe("text printed on a terminal", () => {
  it.each([
    ["a window title (OSC … BEL)", "a\x1b]0;owned\x07b", "ab"],
    ["a window title (OSC … ST)", "a\x1b]0;owned\x1b\\b", "ab"],
    ["a hyperlink (OSC 8)", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "click"],
    ["a clipboard write (OSC 52)", "x\x1b]52;c;cm0gLXJmIH4=\x07y", "xy"],
    ["clear screen and cursor moves (CSI)", "\x1b[2J\x1b[1;1Hhi\x1b[31mred\x1b[0m", "hired"],
    ["8-bit CSI and OSC", "a\u009b2Jb\u009d0;t\u009cc", "abc"],
    ["a carriage return, backspace, bell and other C0/C1 controls", "safe\r\bfake\x07\x00\u0085!", "safefake!"],
    ["a two-character escape (reset terminal)", "a\x1bcb", "ab"],
    ["a charset switch (ESC ( 0)", "a\x1b(0b", "ab"],
    ["DCS, PM and APC strings", "a\x1bPq#0\x1b\\b\x1b^pm\x07c\x1b_apc\x1b\\d", "abcd"],
  ])("drops %s", (_, input, expected) => {
    expect(terminalSafe(input)).toBe(expected);
  });

  it("keeps newlines, tabs and non-ASCII text", () => {
    expect(terminalSafe("line 1\n\tline 2 — ✓ 日本語 😀")).toBe("line 1\n\tline 2 — ✓ 日本語 😀");
  });

  it("removes a sequence split across chunks, whatever the split", () => {
    const text = "Hi \x1b]0;owned\x1b\\there \x1b[2Jfriend\x1b[38;5;196m!";
    for (let cut = 0; cut <= text.length; cut++) {
      const filter = new TerminalTextFilter();
      expect(filter.write(text.slice(0, cut)) + filter.write(text.slice(cut))).toBe("Hi there friend!");
    }
  });

  it("does not let an unterminated title swallow the rest of the reply", () => {
    const filter = new TerminalTextFilter();
    expect(filter.write("a\x1b]0;never ends") + filter.write("\nnext line")).toBe("a\nnext line");
  });
});

describe("the CLI's one writer", () => {
  const captured = (color: boolean) => {
    const written: string[] = [];
    return { writer: terminalWriter({ write: (text: string) => written.push(text) }, color), written };
  };

  it("filters every write, and keeps the CLI's own colours, which are added as marks and sent as escape codes last", () => {
    const { writer, written } = captured(true);
    writer.write(`${writer.colors.red("stepflow:")} bad \x1b]0;owned\x07title\x1b[2J, ${writer.colors.dim("x\x1b]52;c;cm0=\x07y")}\n`);
    expect(written).toEqual(["\x1b[31mstepflow:\x1b[39m bad title, \x1b[2mxy\x1b[22m\n"]);
    expect(writer.rendered(writer.colors.yellow("Approve \x1b[8mhidden?"))).toBe("\x1b[33mApprove hidden?\x1b[39m");
    writer.clearLine();
    expect(written.at(-1)).toBe("\r\x1b[2K");
  });

  it("writes no escape code at all with colour off, not even from marks that came in with the text", () => {
    const { writer, written } = captured(false);
    const { writer: colored } = captured(true);
    writer.write(`${writer.colors.red("stepflow:")} ${colored.colors.bold("made elsewhere")}\n`);
    expect(written).toEqual(["stepflow: made elsewhere\n"]);
  });
});

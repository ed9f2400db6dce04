/**
 * `stepflow serv` and `stepflow /help` look like questions to the command line (its words are
 * the question), but the user meant a command: they are refused with the command meant,
 * instead of being sent to the model.
 */
import { UsageError } from "./errors.ts";

/** Levenshtein distance, for names of a dozen letters (commander's own suggestion is not exported). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)));
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/**
 * Throws a `UsageError` when `words` (the one-shot question) is a single word that is a slash
 * command or nearly the name of one of `commands`.
 * @example checkNotACommand(["serv"], ["serve", "draw"], "stepflow"); // throws: Did you mean stepflow serve?
 */
export function checkNotACommand(words: readonly string[], commands: readonly string[], command: string): void {
  if (words.length !== 1) return;
  const word = (words[0] ?? "").trim();
  if (/^\/\S+$/.test(word))
    throw new UsageError(
      `${word} is a chat command: start the chat with ${command}, then type it. For the command line's own help: ${command} --help. To ask the model, write a question.`,
    );
  const lower = word.toLowerCase();
  if (!/^[a-z-]{3,}$/.test(lower)) return;
  const near = commands.find(
    (name) => name !== lower && (distance(lower, name) <= (name.length >= 5 ? 2 : name.length === 4 ? 1 : 0) || (name.startsWith(lower) && lower.length >= 3)),
  );
  if (near)
    throw new UsageError(
      `There is no command "${word}". Did you mean ${command} ${near}? To ask the model one word, quote it as a question: ${command} "${word}?"`,
    );
}

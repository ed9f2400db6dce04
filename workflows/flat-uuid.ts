/**
 * Random UUIDs (v4) as one flat string. Node's `crypto.randomUUID()` joins 20 pieces with `+`,
 * which V8 keeps as a tree of about 20 string objects (~900 bytes made, ~600 kept) until the
 * string is flattened. The agent makes one per message and per tool call, and keeps them while
 * the session waits for its model: with many sessions in flight, those trees are what the
 * garbage collector copies. Here the 36 characters are written into a buffer and read as one
 * string (~60 bytes). The randomness is Node's too: `randomFillSync`, drawn in batches as
 * `randomUUID` does.
 */
import { randomFillSync } from "node:crypto";

const BATCH = 128; // UUIDs of entropy drawn at once, as randomUUID does
const entropy = Buffer.alloc(16 * BATCH);
let used = entropy.length;
const text = Buffer.alloc(36);
const HEX = Buffer.from("0123456789abcdef", "latin1");

/**
 * A random UUID v4 (RFC 9562), lower-case like `crypto.randomUUID()`, as one flat string.
 * @example
 * flatUUID(); // "3b241101-e2bb-4255-8caf-4136c566a962"
 */
export function flatUUID(): string {
  if (used === entropy.length) {
    randomFillSync(entropy);
    used = 0;
  }
  const at = used;
  used += 16;
  let out = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) text[out++] = 0x2d; // "-"
    let byte = entropy[at + i] as number;
    if (i === 6)
      byte = (byte & 0x0f) | 0x40; // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80; // variant 10
    text[out++] = HEX[byte >> 4] as number;
    text[out++] = HEX[byte & 0x0f] as number;
  }
  return text.toString("latin1");
}

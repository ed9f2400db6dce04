/**
 * `@llamaindex/env/tokenizers` as the bundled `stepflow` command has it (scripts/build.mjs puts
 * this module in the package's place): the same exports, but the tokenizer is loaded on its
 * first `encode` or `decode`. The package loads gpt-tokenizer (else js-tiktoken), about 1 MB of
 * byte-pair ranks, as it is imported, and LlamaIndex imports it from its `Settings`, memory and
 * embeddings: every command paid for a tokenizer that most never use.
 */
import { createRequire } from "node:module";
import type { Tokenizer, Tokenizers as TokenizerName } from "@llamaindex/env/tokenizers";

type TokenizersModule = typeof import("@llamaindex/env/tokenizers");

const require = createRequire(import.meta.url);
let real: TokenizersModule | undefined;
/** The package itself, its CommonJS build: `encode` answers synchronously, so the load must too. */
const load = (): TokenizersModule => (real ??= require("@llamaindex/env/tokenizers") as TokenizersModule);

/**
 * The encodings, as the package names them.
 * @example tokenizers.tokenizer(Tokenizers.CL100K_BASE).encode("Hello").length; // 1
 */
export const Tokenizers = { CL100K_BASE: "cl100k_base" } as typeof TokenizerName;

let cl100k: Tokenizer | undefined;
const lazy: Tokenizer = {
  encode: (text) => (cl100k ??= load().tokenizers.tokenizer()).encode(text),
  decode: (tokens) => (cl100k ??= load().tokenizers.tokenizer()).decode(tokens),
};

/**
 * The package's `tokenizers`: `tokenizer()` answers at once, and loads the real one when it is first used.
 * @example tokenizers.tokenizer().encode("Hello, world").length; // 4
 */
export const tokenizers = {
  tokenizer(encoding?: TokenizerName): Tokenizer {
    // Another encoding: the package's own answer (today an error saying it is not supported).
    if (encoding && encoding !== Tokenizers.CL100K_BASE) return load().tokenizers.tokenizer(encoding);
    return lazy;
  },
};

/**
 * The notebook's calculator tools (`add`, `multiply`) plus `subtract` and `divide`, as
 * LlamaIndex `FunctionTool`s made with stepflow's `tool()`: zod checks the arguments, and the
 * JSON schema the LLM sees is generated from the same zod schema. They only compute, so they
 * are annotated read-only: a call cut short is simply made again.
 */
import { tool } from "../../src/tools/tool.ts";
import { annotateTool } from "../../src/tools/tool-annotations.ts";
import { z } from "zod";

const READ_ONLY = { readOnlyHint: true } as const;

const operands = z.object({
  x: z.number().describe("The first number."),
  y: z.number().describe("The second number."),
});

/** @example await add.call({ x: 2123, y: 2321 }); // 4444 */
export const add = annotateTool(tool({ name: "add", description: "Add two numbers: x + y.", parameters: operands, execute: ({ x, y }) => x + y }), READ_ONLY);

/** @example await subtract.call({ x: 10, y: 4 }); // 6 */
export const subtract = annotateTool(
  tool({ name: "subtract", description: "Subtract two numbers: x - y.", parameters: operands, execute: ({ x, y }) => x - y }),
  READ_ONLY,
);

/** @example await multiply.call({ x: 4444, y: 312 }); // 1386528 */
export const multiply = annotateTool(
  tool({ name: "multiply", description: "Multiply two numbers: x * y.", parameters: operands, execute: ({ x, y }) => x * y }),
  READ_ONLY,
);

/**
 * @example
 * await divide.call({ x: 1, y: 4 }); // 0.25
 * await divide.call({ x: 1, y: 0 }); // throws "Cannot divide by zero: y must not be 0."
 */
export const divide = annotateTool(
  tool({
    name: "divide",
    description: "Divide two numbers: x / y. y must not be 0.",
    parameters: operands,
    execute: ({ x, y }) => {
      if (y === 0) throw new RangeError("Cannot divide by zero: y must not be 0.");
      return x / y;
    },
  }),
  READ_ONLY,
);

/** All four, for `new FunctionCallingAgent({ llm, tools: calculatorTools })`. */
export const calculatorTools = [add, subtract, multiply, divide];

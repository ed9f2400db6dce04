/**
 * The HR tool the DBOS worker children give their agents: `fire_employee` DELETEs employee N
 * from the HR test server, after passing the gate `tool`, so a test can hold or kill a worker
 * in the middle of the call.
 */
import { z } from "zod";
import { annotateTool, tool } from "../../src/tools/tool.ts";

/**
 * `fire_employee` against the HR server at `hrURL`; `pass` waits at the test's gate. A DELETE is
 * idempotent (RFC 9110), so the tool says so unless `unannotated`: a call cut short may be made again.
 * @example const fire = fireEmployeeTool(hrURL, pass);
 */
export function fireEmployeeTool(hrURL: string, pass: (gate: string) => Promise<void>, { unannotated = false } = {}) {
  const fire = tool({
    name: "fire_employee",
    description: "Remove an employee from the HR system.",
    parameters: z.object({ id: z.number() }),
    execute: async ({ id }) => {
      await pass("tool");
      const response = await fetch(`${hrURL}/api/users/${id}`, { method: "DELETE" });
      return `Employee ${id}: HTTP ${response.status}`;
    },
  });
  return unannotated ? fire : annotateTool(fire, { idempotentHint: true });
}

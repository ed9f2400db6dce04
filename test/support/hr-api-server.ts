// The HR demo API ships with the CLI (`--hr-demo`); the tests drive the same server.
export { hrOpenApi, startHrApiServer } from "../../workflows/demo/hr-api-server.ts";
export type { HrApiServer, HrUser } from "../../workflows/demo/hr-api-server.ts";

// require() of the package (Node 20.19 and later load ES modules through require).
const { Workflow } = require("stepflow");
const { calculatorTools } = require("stepflow/tools/calculator");
console.log(`require: ${typeof Workflow}, ${calculatorTools.length} tools`);

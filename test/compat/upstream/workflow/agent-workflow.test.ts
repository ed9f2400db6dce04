import { Settings } from "@llamaindex/core/global";
import { MockLLM } from "@llamaindex/core/llms/mock";
import { FunctionTool } from "@llamaindex/core/tools";
import { Logger } from "@llamaindex/env";
import { describe, expect, test, vi } from "vitest";
import { z } from "zod";
import {
  AgentWorkflow,
  FunctionAgent,
  agent,
  agentInputEvent,
  agentOutputEvent,
  agentSetupEvent,
  agentStepEvent,
  agentStreamEvent,
  agentToolCallEvent,
  agentToolCallResultEvent,
  multiAgent,
  startAgentEvent,
  stopAgentEvent,
  toolCallsEvent,
  toolResultsEvent,
} from "../../../../src/compat/workflow/index.ts";
import { setupToolCallingMockLLM } from "./mock";

describe("AgentWorkflow", () => {
  test("agent workflow and function agent creation correctly", () => {
    // Create a proper instance of MockLLM
    const mockLLM = new MockLLM();
    mockLLM.supportToolCall = true;

    // Create minimal tools
    const addTool = FunctionTool.from(
      (params: { x: number; y: number }) => params.x + params.y,
      {
        name: "add",
        description: "Adds two numbers",
        parameters: z.object({
          x: z.number(),
          y: z.number(),
        }),
      },
    );
    const multiplyTool = FunctionTool.from(
      (params: { x: number; y: number }) => params.x * params.y,
      {
        name: "multiply",
        description: "Multiplies two numbers",
        parameters: z.object({
          x: z.number(),
          y: z.number(),
        }),
      },
    );

    // Create function agents
    const calculatorAgent = new FunctionAgent({
      name: "CalculatorAgent",
      description: "Simple calculator",
      tools: [addTool],
      llm: mockLLM,
    });

    const mathAgent = new FunctionAgent({
      name: "MathAgent",
      description: "Performs math operations",
      tools: [addTool, multiplyTool],
      llm: mockLLM,
      canHandoffTo: [calculatorAgent],
    });

    // Verify create single agent workflow
    const singleAgentWorkflow = AgentWorkflow.fromTools({
      tools: [addTool],
      llm: mockLLM,
    });
    expect(singleAgentWorkflow).toBeDefined();

    // Verify workflow initializes correctly with multiple agents
    const workflow = new AgentWorkflow({
      agents: [mathAgent, calculatorAgent],
      rootAgent: mathAgent,
      verbose: false,
    });

    // Verify workflow is defined
    expect(workflow).toBeDefined();

    // Verify adding duplicate agents throws an error
    expect(() => {
      new AgentWorkflow({
        agents: [mathAgent, mathAgent],
        rootAgent: mathAgent,
      });
    }).toThrow();

    // Verify using a non-existent root agent throws an error
    expect(() => {
      new AgentWorkflow({
        agents: [mathAgent],
        rootAgent: calculatorAgent,
      });
    }).toThrow();

    // Expect mathAgent has handOff tools after setup
    expect(
      mathAgent.tools.some((tool) => tool.metadata.name === "handOff"),
    ).toBe(true);
  });

  test("single agent workflow runs correctly", async () => {
    // This test don't need to handoff
    const mockLLM = setupToolCallingMockLLM("add", { x: 1, y: 2 });
    Settings.llm = mockLLM;

    const addTool = FunctionTool.from(
      (params: { x: number; y: number }) => {
        console.log("addTool called with", params);
        return params.x + params.y;
      },
      {
        name: "add",
        description: "Adds two numbers",
      },
    );

    // Spy on the tool's call method
    vi.spyOn(addTool, "call");

    const workflow = AgentWorkflow.fromTools({
      tools: [addTool],
      llm: mockLLM,
      verbose: false,
    });

    const result = workflow.runStream("What is 2 + 2?");

    const expectedEventSequence = [
      startAgentEvent,
      agentInputEvent,
      agentSetupEvent,
      agentStreamEvent,
      agentStepEvent,
      agentOutputEvent,
      toolCallsEvent,
      agentToolCallEvent,
      agentToolCallResultEvent,
      toolResultsEvent,
      agentInputEvent,
      agentSetupEvent,
      agentStreamEvent,
      agentStepEvent,
      agentOutputEvent,
      stopAgentEvent,
    ];

    // Check the event sequence - exact types in exact order
    let i = 0;
    for await (const event of result) {
      expect(expectedEventSequence[i++].include(event));
    }

    // Check if addTool is called
    expect(addTool.call).toHaveBeenCalled();

    // Check that we have events
    expect(i).toEqual(expectedEventSequence.length);
  });

  test("run method executes workflow correctly", async () => {
    // Setup mock LLM and tool
    const mockLLM = setupToolCallingMockLLM("add", { x: 1, y: 2 });
    Settings.llm = mockLLM;

    const addTool = FunctionTool.from(
      (params: { x: number; y: number }) => {
        return params.x + params.y;
      },
      {
        name: "add",
        description: "Adds two numbers",
        parameters: z.object({
          x: z.number(),
          y: z.number(),
        }),
      },
    );

    vi.spyOn(addTool, "call");

    const testLogger: Logger = Object.freeze({
      log: console.log.bind(console),
      error: console.error.bind(console),
      warn: console.warn.bind(console),
    });

    // Create workflow with single agent
    // Additionally test verbose logging
    const workflow = AgentWorkflow.fromTools({
      tools: [addTool],
      llm: mockLLM,
      verbose: true,
      logger: testLogger,
    });

    // Run the workflow
    const result = await workflow.run("What is 1 + 2?");
    // Verify the result is a stopAgentEvent with the correct data
    expect(stopAgentEvent.include(result)).toBe(true);
    expect(result.data.result).toBe("Final response");
  });
});

describe("agent", () => {
  test("agent run method handles file input correctly", async () => {
    const pdfBuffer = Buffer.from("test PDF content");
    const llm = new MockLLM();
    llm.supportToolCall = true;
    const addTool = FunctionTool.from(
      (params: { x: number; y: number }) => params.x + params.y,
      {
        name: "add",
        description: "Adds two numbers",
        parameters: z.object({
          x: z.number(),
          y: z.number(),
        }),
      },
    );
    const testAgent = agent({
      name: "TestAgent",
      description: "Test agent",
      tools: [addTool],
      llm: llm,
    });

    const response = await testAgent.run([
      {
        type: "file",
        data: pdfBuffer,
        mimeType: "application/pdf",
      },
    ]);

    const messages = await response.data.state!.memory.get();
    const fileMessage = messages[0].content[0];

    expect(fileMessage.type).toEqual("file");
    expect(fileMessage.mimeType).toEqual("application/pdf");
    expect(fileMessage.data).toEqual(pdfBuffer);
  });

  test("agent with responseFormat returns structured output", async () => {
    const weatherTool = FunctionTool.from(
      ({ location }: { location: string }) => {
        return `The weather in ${location} is sunny. The temperature is 72 degrees. The humidity is 50%. The wind speed is 10 mph.`;
      },
      {
        name: "weatherTool",
        description: "Get weather information",
        parameters: z.object({
          location: z.string(),
        }),
      },
    );

    const responseSchema = z.object({
      temperature: z.number(),
      humidity: z.number(),
      windSpeed: z.number(),
    });

    // Define the expected structured output
    const expectedObject = {
      temperature: 72,
      humidity: 50,
      windSpeed: 10,
    };

    // Create a mock LLM with structured output support
    const mockLLM = new MockLLM({
      responseMessage: "Weather information retrieved and formatted.",
    });

    mockLLM.exec = vi.fn().mockResolvedValue({
      object: expectedObject,
    });

    // Spy on the weather tool to verify it gets called
    vi.spyOn(weatherTool, "call");

    const myAgent = agent({
      name: "myAgent",
      tools: [weatherTool],
      llm: mockLLM,
    });

    const result = await myAgent.run("What's the weather in Tokyo?", {
      responseFormat: responseSchema,
    });

    expect(result.data.object).toMatchObject(expectedObject);
  });
});

describe("Multiple agents", () => {
  test("multiple agents are set up correctly with handoff capabilities", () => {
    // Create mock LLM
    const mockLLM = new MockLLM();
    mockLLM.supportToolCall = true;

    // Create tools for agents
    const addTool = FunctionTool.from(
      (params: { x: number; y: number }) => params.x + params.y,
      {
        name: "add",
        description: "Adds two numbers",
        parameters: z.object({
          x: z.number(),
          y: z.number(),
        }),
      },
    );

    const multiplyTool = FunctionTool.from(
      (params: { x: number; y: number }) => params.x * params.y,
      {
        name: "multiply",
        description: "Multiplies two numbers",
        parameters: z.object({
          x: z.number(),
          y: z.number(),
        }),
      },
    );

    const subtractTool = FunctionTool.from(
      (params: { x: number; y: number }) => params.x - params.y,
      {
        name: "subtract",
        description: "Subtracts two numbers",
        parameters: z.object({
          x: z.number(),
          y: z.number(),
        }),
      },
    );

    // Create agents using the agent() function
    const addAgent = agent({
      name: "AddAgent",
      description: "Agent that can add numbers",
      tools: [addTool],
      llm: mockLLM,
    });

    const multiplyAgent = agent({
      name: "MultiplyAgent",
      description: "Agent that can multiply numbers",
      tools: [multiplyTool],
      llm: mockLLM,
    });

    const mathAgent = agent({
      name: "MathAgent",
      description: "Agent that can do various math operations",
      tools: [addTool, multiplyTool, subtractTool],
      llm: mockLLM,
      canHandoffTo: ["AddAgent", "MultiplyAgent"],
    });

    // Create workflow with multiple agents using multiAgent
    const workflow = multiAgent({
      agents: [mathAgent, addAgent, multiplyAgent],
      rootAgent: mathAgent,
      verbose: false,
    });

    // Verify agents are set up correctly
    expect(workflow).toBeDefined();
    expect(workflow.getAgents().length).toBe(3);

    // Verify that the mathAgent has a handoff tool
    const mathAgentInstance = workflow
      .getAgents()
      .find((agent) => agent.name === "MathAgent");
    expect(mathAgentInstance).toBeDefined();
    expect(
      mathAgentInstance?.tools.some((tool) => tool.metadata.name === "handOff"),
    ).toBe(true);

    // Verify that addAgent and multiplyAgent don't have handoff tools since they don't handoff to other agents
    const addAgentInstance = workflow
      .getAgents()
      .find((agent) => agent.name === "AddAgent");
    expect(addAgentInstance).toBeDefined();
    expect(
      addAgentInstance?.tools.some((tool) => tool.metadata.name === "handOff"),
    ).toBe(false);

    const multiplyAgentInstance = workflow
      .getAgents()
      .find((agent) => agent.name === "MultiplyAgent");
    expect(multiplyAgentInstance).toBeDefined();
    expect(
      multiplyAgentInstance?.tools.some(
        (tool) => tool.metadata.name === "handOff",
      ),
    ).toBe(false);

    // Verify agent specific tools are preserved
    expect(
      mathAgentInstance?.tools.some(
        (tool) => tool.metadata.name === "subtract",
      ),
    ).toBe(true);
    expect(
      addAgentInstance?.tools.some((tool) => tool.metadata.name === "add"),
    ).toBe(true);
    expect(
      multiplyAgentInstance?.tools.some(
        (tool) => tool.metadata.name === "multiply",
      ),
    ).toBe(true);
  });
});

/**
 * What a typed `WorkflowClient` knows of the workflows a server serves: their names, the input
 * their runs take, the result they give as the server sends it, and the fields of the events a
 * client sends into a run. Types only, read from the shape of the server's own record of
 * workflows (`WorkflowClient<typeof workflows>`, imported with `import type`), so that a
 * browser bundle of the client carries none of the server's or the engine's code; this file
 * imports no engine type either, so that the client's types stand on their own.
 */
import type { HandlerInfo, JsonObject, JsonValue } from "./types.ts";

/**
 * A workflow as far as a client's types go: `Workflow<Input, Result>`'s `run(input)`, whose
 * handler resolves to the result. Read by shape, which every `Workflow` subclass has.
 * @example
 * const shaped: WorkflowShape = new Workflow<{ n: number }, number>();
 */
export interface WorkflowShape {
  run(input: never, ...rest: never[]): PromiseLike<unknown>;
}

/**
 * The workflows a server serves, by the name clients use: the record given to
 * `new WorkflowServer({ workflows })`, each a workflow or a `ServedWorkflow` (`{ workflow, … }`).
 * `WorkflowClient`'s type argument is one (`typeof workflows`).
 * @example
 * const workflows = { double: new DoubleFlow(), agent: { workflow: agent, description: "Chat" } } satisfies ServedWorkflows;
 */
export type ServedWorkflows = { readonly [name: string]: WorkflowShape | { readonly workflow: WorkflowShape } };

/**
 * The names of the workflows of `W` (any string for an untyped client, `W` = `never`).
 * @example
 * type Names = WorkflowName<{ double: DoubleFlow; agent: FunctionCallingAgent }>; // "double" | "agent"
 */
export type WorkflowName<W extends ServedWorkflows> = [W] extends [never] ? string : keyof W & string;

/** The workflow of a served entry: itself, or a `ServedWorkflow`'s `workflow`. */
type WorkflowOf<E> = E extends { readonly workflow: infer Inner } ? Inner : E;

/** The input a run of the served entry `E` takes: its `Workflow`'s `Input`. Distributes over a union of entries. */
type InputOfEntry<E> = WorkflowOf<E> extends { run(input: infer I, ...rest: never[]): unknown } ? Exclude<I, undefined> : never;

/** The result of a run of the served entry `E`, as the server sends it. Distributes over a union of entries. */
type ResultOfEntry<E> = E extends unknown ? (WorkflowOf<E> extends { run(...args: never[]): PromiseLike<infer R> } ? Serialized<R> : never) : never;

/**
 * The input a run of workflow `K` of `W` takes: the fields of its `StartEvent`, as declared by
 * `Workflow<Input, Result>` (`JsonObject` for an untyped client). It is sent as
 * `JSON.stringify` writes it; a step gets that JSON (a `Date` arrives as its ISO text).
 * @example
 * type In = RunInput<{ double: Workflow<{ n: number }, number> }, "double">; // { n: number }
 */
export type RunInput<W extends ServedWorkflows, K extends WorkflowName<W>> = [W] extends [never] ? JsonObject : InputOfEntry<W[K]>;

/**
 * The result of a run of workflow `K` of `W` (of any of them, for a union of names), as the
 * server sends it: the `Result` of `Workflow<Input, Result>` in its JSON form ({@link Serialized}),
 * or `JsonValue` for an untyped client.
 * @example
 * type Out = RunResult<{ double: Workflow<{ n: number }, { at: Date }> }, "double">; // { at: { $codec: "Date"; value: string } }
 */
export type RunResult<W extends ServedWorkflows, K extends WorkflowName<W>> = [W] extends [never] ? JsonValue : ResultOfEntry<W[K]>;

/**
 * A handler of workflow `K` of `W`: its `workflow` is `K` and its `result` is typed as that
 * workflow's. For a union of names it is a union too, told apart by `workflow`.
 * @example
 * const info: HandlerOf<typeof workflows, "double" | "agent"> = await client.getHandler(id);
 * if (info.workflow === "double") console.log(info.result); // the double workflow's result
 */
export type HandlerOf<W extends ServedWorkflows, K extends WorkflowName<W>> = [W] extends [never]
  ? HandlerInfo
  : K extends unknown
    ? HandlerInfo<RunResult<W, K>, K>
    : never;

/** Values JSON leaves out of an object (a field of one of these types is absent from what is sent). */
type LeftOut = undefined | symbol | ((...args: never[]) => unknown);

/** The keys of `T` JSON writes: string and number keys whose values are not all left out. */
type WrittenKey<T, K extends keyof T> = K extends string | number ? ([T[K]] extends [LeftOut] ? never : K) : never;

/** An object type written out field by field (for readable hovers and messages). */
type Flat<T> = { [K in keyof T]: T[K] };

/** `T`'s fields in JSON: one that may be `undefined` is optional, since JSON then leaves it out. */
type SerializedObject<T> = Flat<
  { [K in keyof T as undefined extends T[K] ? never : WrittenKey<T, K>]: Serialized<T[K]> } & {
    [K in keyof T as undefined extends T[K] ? WrittenKey<T, K> : never]?: Serialized<Exclude<T[K], undefined>>;
  }
>;

/**
 * The JSON form the server sends for a value of type `T` (a run's result), and reads back for
 * an event's fields: the same type for plain data (strings, numbers, booleans, null, arrays and
 * plain objects); a `Date`, which the server saves with its built-in codec, is
 * `{ $codec: "Date", value }` (its ISO text); a field that may be `undefined` is optional, and
 * one holding only `undefined` or a function is left out. Values of classes of your own, saved
 * with a codec of the workflow's, arrive as `{ $codec: name, value }` and are not typed so:
 * declare results that clients read as plain data.
 * @example
 * type Wire = Serialized<{ total: number; at: Date; note?: string | undefined }>;
 * // { total: number; at: { $codec: "Date"; value: string }; note?: string }
 */
export type Serialized<T> = 0 extends 1 & T
  ? JsonValue
  : unknown extends T
    ? JsonValue
    : T extends string | number | boolean | null
      ? T
      : T extends Date
        ? { readonly $codec: "Date"; readonly value: string }
        : T extends LeftOut | bigint
          ? never
          : T extends readonly unknown[]
            ? { [I in keyof T]: Serialized<T[I]> }
            : T extends object
              ? SerializedObject<T>
              : JsonValue;

/*
 * Events a client sends are named by type only, never passed as the class itself:
 * `client.sendEvent<typeof Answer>(id, "Answer", { … })`, with `import type { Answer }`. Two
 * things rule the class out as a value in the code that runs, above all in a browser:
 * - The server knows an event by its class's name (or its `static typeName`), and a minifier
 *   renames classes: bundled with `esbuild --minify`, `HumanResponseEvent.name` is "vt", so a
 *   client reading the name from the class would send a type the server refuses, in exactly
 *   the production bundle a web app ships.
 * - An event class comes with the engine it extends (`stepflow`, which imports node:path and
 *   other Node built-ins): a browser bundle fails to build, or grows from 3 KB (gzipped, the
 *   client alone) to 12 KB with Node's modules stubbed out.
 * The type carries everything the client needs to check: the fields, and the name when the
 * class declares a `static readonly typeName`.
 */

/**
 * An event class as a type: `typeof MyEvent` (imported with `import type`).
 * @example
 * import type { ToolApprovalEvent } from "stepflow/events";
 * type Answer = typeof ToolApprovalEvent; // an EventClassType
 * await client.sendEvent<Answer>(id, "agent.ToolApprovalEvent", { approvalId, approved: true });
 */
export type EventClassType = abstract new (...args: never[]) => object;

/**
 * The type name the server knows events of class `E` by: its `static readonly typeName` when it
 * declares one as a literal (the agent's events do), else any string (the class's name, which
 * types do not know). A class that inherits a `typeName` without declaring its own is named by
 * its class name at run time: give it its own `typeName`.
 * @example
 * type N = EventTypeName<typeof ToolApprovalEvent>; // "agent.ToolApprovalEvent"
 */
export type EventTypeName<E extends EventClassType> = E extends { readonly typeName: infer N extends string } ? N : string;

/**
 * The fields a client sends for an event of class `E`, in their JSON form ({@link Serialized}):
 * the server reads them back into a new `E`.
 * @example
 * type Fields = EventData<typeof ToolApprovalEvent>; // { approvalId: string; approved: boolean; reason?: string }
 */
export type EventData<E extends EventClassType> = Serialized<InstanceType<E>>;

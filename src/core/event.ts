/**
 * Events: typed data carried between steps. An event type is a subclass with typed fields,
 * `class Joke extends Event<{ text: string }> {}`, built with `new Joke({ text })` and read
 * as `joke.text`. Routing is by exact class, so the class *is* the event's type.
 */

/** Constructor arguments of an event with fields `T`: optional when `T` has no required field. */
export type EventArgs<T> = {} extends T ? [fields?: T] : [fields: T];

/** Any event class (a constructor of events). */
export type EventClass<E extends Event = Event> = abstract new (...args: never[]) => E;

/** The event types a class makes, for `accepts`/`emits` lists. */
export type EventOf<C> = C extends abstract new (...args: never[]) => infer E ? E : never;

/**
 * The event `ctx.waitForEvent(C)` and `ctx.collectEvents` give for the class `C`: its
 * instances, fields typed. A class given without fields, such as `HumanResponseEvent`
 * rather than `HumanResponseEvent<{ response: string }>` or a subclass, says nothing of the
 * event's fields: each reads as `unknown`, to be checked before use.
 * @example
 * const answer = await ctx.waitForEvent(HumanResponseEvent); // ReceivedEvent<typeof HumanResponseEvent>
 * const approved = answer.response === "yes"; // answer.response: unknown
 * const typed = await ctx.waitForEvent(HumanResponseEvent<{ response: string }>); // typed.response: string
 */
export type ReceivedEvent<C> = C extends FieldEventClass<infer Base> ? Base & Record<string, unknown> : EventOf<C>;

class BaseEvent {
  constructor(fields?: object) {
    if (fields !== undefined) Object.assign(this, fields);
  }
}

/** A class of events whose fields are given by a type argument: `Event<{ a: number }>`. */
export interface FieldEventClass<Base> {
  new <T extends object = {}>(...args: EventArgs<T>): Base & T;
  readonly prototype: Base;
}

/**
 * The base of every event. Subclass it with the fields as type argument.
 * @example
 * class InputEvent extends Event<{ input: ChatMessage[] }> {}
 * const ev = new InputEvent({ input: [] });
 * ev.input; // ChatMessage[]
 */
export const Event = BaseEvent as FieldEventClass<BaseEvent>;
/** An event with fields `T`. */
export type Event<T extends object = {}> = BaseEvent & T;

const StartEventClass = class StartEvent extends BaseEvent {};
/**
 * The event that starts a run; its fields are the object given to `workflow.run(fields)`.
 * @example
 * @step({ accepts: [StartEvent], emits: [StopEvent] })
 * async start(_ctx: Context, ev: StartEvent<{ input: string }>) { return new StopEvent({ result: ev.input }); }
 */
export const StartEvent = StartEventClass as FieldEventClass<InstanceType<typeof StartEventClass>>;
/** A start event carrying the run's fields `T`. */
export type StartEvent<T extends object = Record<string, unknown>> = InstanceType<typeof StartEventClass> & T;

/**
 * The event that ends a run. Awaiting a run whose last event is exactly `StopEvent` gives
 * its `result`; a subclass of `StopEvent` is returned as the event itself.
 * @example
 * return new StopEvent({ result: { answer: 42 } });
 */
export class StopEvent<R = unknown> extends BaseEvent {
  declare result: R;
  // Type-only (never set): a private member makes the type nominal, so that `@step` can tell a
  // StopEvent class from an event class that merely has a `result` field.
  declare private readonly stopEventBrand: true;
  constructor(...args: undefined extends R ? [fields?: { result?: R }] : [fields: { result: R }]) {
    super(args[0] ?? { result: undefined });
  }

  /**
   * A base for a StopEvent subclass with fields of its own, typed like an `Event`'s: its
   * constructor takes exactly those fields, and a workflow declared `Workflow<In, MyStop>`
   * returns the event itself from `await run()`, fields typed.
   * @example
   * class Answer extends StopEvent.withFields<{ text: string; score: number }>() {}
   * return new Answer({ text: "42", score: 0.9 });
   */
  static withFields<F extends object>(): StopEventWithFields<F> {
    return class extends StopEvent {
      constructor(fields?: F) {
        super();
        if (fields !== undefined) Object.assign(this, fields);
      }
    } as unknown as StopEventWithFields<F>;
  }
}

/** The class `StopEvent.withFields<F>()` returns: constructed from fields `F`. @example `const Base: StopEventWithFields<{ text: string }> = StopEvent.withFields<{ text: string }>();` */
export interface StopEventWithFields<F extends object> {
  new (...args: EventArgs<F>): StopEvent<undefined> & F;
  readonly prototype: StopEvent<undefined>;
}

const InputRequiredEventClass = class InputRequiredEvent extends BaseEvent {};
/**
 * Asks a human for input. A step may emit it without any step accepting it: it goes to the
 * event stream, where the app shows it and answers with a {@link HumanResponseEvent}.
 * @example
 * ctx.writeEventToStream(new InputRequiredEvent({ prefix: "Approve firing Lawson? (yes/no)" }));
 */
export const InputRequiredEvent = InputRequiredEventClass as FieldEventClass<InstanceType<typeof InputRequiredEventClass>>;
/** An input-required event with fields `T`. */
export type InputRequiredEvent<T extends object = Record<string, unknown>> = InstanceType<typeof InputRequiredEventClass> & T;

const HumanResponseEventClass = class HumanResponseEvent extends BaseEvent {};
/**
 * A human's answer, sent from outside the run with `handler.ctx.sendEvent(...)`. A step may
 * accept it (or `ctx.waitForEvent` it) without any step emitting it.
 * @example
 * handler.ctx.sendEvent(new HumanResponseEvent({ response: "yes" }));
 */
export const HumanResponseEvent = HumanResponseEventClass as FieldEventClass<InstanceType<typeof HumanResponseEventClass>>;
/** A human-response event with fields `T`. */
export type HumanResponseEvent<T extends object = Record<string, unknown>> = InstanceType<typeof HumanResponseEventClass> & T;

/**
 * The stable name of an event type, used by serialization and drawings: the class's own
 * `static readonly typeName` when it sets one, else the class name.
 * @example
 * class Ping extends Event<{}> { static readonly typeName = "demo.Ping"; }
 * eventTypeName(Ping); // "demo.Ping"
 */
export function eventTypeName(type: EventClass): string {
  const own = Object.getOwnPropertyDescriptor(type, "typeName")?.value;
  return typeof own === "string" && own.length > 0 ? own : type.name;
}

/** True when `type` is `base` or a subclass of it. @example `isSubclassOf(MyStart, StartEvent)` */
export function isSubclassOf(type: EventClass, base: EventClass): boolean {
  return type === base || type.prototype instanceof base;
}

/** True for any event instance. @example `isEvent(value) || fail("not an event")` */
export function isEvent(value: unknown): value is Event {
  return value instanceof BaseEvent;
}

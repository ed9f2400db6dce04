/** The context of a run as JSON, as the server saves and shows it. */
import type { Context, ContextJSON } from "../core/internal.ts";

/**
 * The context as JSON, or undefined when a value in it cannot be saved (the run goes on; it just cannot be restored).
 * @example `const context = contextOf(handler.ctx); if (context?.run) keepCheckpoint(context);`
 */
export function contextOf(ctx: Context): ContextJSON | undefined {
  try {
    return ctx.toJSON();
  } catch {
    return undefined;
  }
}

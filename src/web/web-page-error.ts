import { StepflowError } from "../core/internal.ts";

/**
 * The web page could not be built or found. @example `if (err instanceof WebPageError) console.error(err.message)`
 */
export class WebPageError extends StepflowError {
  override name = "WebPageError";
}

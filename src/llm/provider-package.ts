/**
 * Loads a model provider's official SDK when its model class first calls it, not when stepflow
 * is imported: `@anthropic-ai/sdk`, `@google/genai` and `ollama` are optional peer
 * dependencies, so an application installs only the one it uses.
 */
import { StepflowError } from "../core/internal.ts";

/**
 * The provider SDK a model class needs is not installed. `packageName` is what to install.
 * @example
 * try { await agent.run({ input }); } catch (e) { if (e instanceof ProviderPackageMissingError) console.log(`npm install ${e.packageName}`); }
 */
export class ProviderPackageMissingError extends StepflowError {
  override name = "ProviderPackageMissingError";
  constructor(
    message: string,
    readonly packageName: string,
  ) {
    super(message);
  }
}

/** The provider SDKs, by package name. */
interface ProviderPackages {
  "@anthropic-ai/sdk": typeof import("@anthropic-ai/sdk");
  "@google/genai": typeof import("@google/genai");
  ollama: typeof import("ollama");
}

/**
 * Imports `packageName`; if it is not installed, a {@link ProviderPackageMissingError} names the
 * package to install. The name is a variable so that a bundler leaves the import to run time.
 * @example
 * const { default: Anthropic } = await loadProviderPackage("@anthropic-ai/sdk", "Anthropic");
 */
export async function loadProviderPackage<K extends keyof ProviderPackages>(packageName: K, modelClass: string): Promise<ProviderPackages[K]> {
  try {
    return (await import(/* @vite-ignore */ packageName)) as ProviderPackages[K];
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    // Only the package itself missing: one that is installed but fails to load keeps its own error.
    if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && message.includes(`'${packageName}'`)) {
      throw new ProviderPackageMissingError(
        `stepflow's ${modelClass} model needs the package ${packageName}, which is not installed. Install it next to stepflow: npm install ${packageName}`,
        packageName,
      );
    }
    throw error;
  }
}

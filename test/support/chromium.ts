/** Debian's Chromium for the browser tests, started headless with a profile of the test's own. */
import { existsSync } from "node:fs";
import { chromium, type BrowserContext } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const haveChromium = existsSync(CHROMIUM);

/** Chromium on `profile`, with nothing of its own on the network (no updates, sync, QUIC probes). */
export function launchChromium(profile: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1200, height: 860 },
  });
}

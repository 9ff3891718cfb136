// What both browser drivers (lobby.mjs, table.mjs) share: the environment they need, and Debian's
// Chromium launched through playwright-core (never Playwright's own browser download).
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";

/** The named environment variables, or exit 2 naming them all when one is missing. */
export function required(...names) {
  const values = Object.fromEntries(names.map((n) => [n, process.env[n]]));
  if (names.some((n) => !values[n])) {
    console.error(`${names.join(", ")} are needed`);
    process.exit(2);
  }
  mkdirSync(values.ARTIFACTS ?? ".", { recursive: true });
  return values;
}

/** Chromium (CHROMIUM, default /usr/bin/chromium) as root in a sandbox with no outside network: no
 * sandbox, no GPU, none of Chromium's own background connections (they are refused here, many at a
 * time). */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync",
    ],
  });
}

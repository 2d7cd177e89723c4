/**
 * Debian's Chromium driven by playwright-core (no browser download): `scripts/ensure-chromium.mjs`
 * (the root `pretest`) installs the package where it is missing. `CHROMIUM_PATH` points elsewhere.
 */
import * as Fs from "node:fs"
import { type Browser, chromium } from "playwright-core"

/** Where the browser is: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`. */
export const executablePath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

/** Headless, sandbox off (containers run as root), and nothing that reaches the network by itself. */
export const args = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage"
]

/** Launches Chromium (a fresh temporary profile), or fails saying how to install it. */
export const launch = async (): Promise<Browser> => {
  if (!Fs.existsSync(executablePath)) {
    throw new Error(
      `Chromium is not installed at ${executablePath}: run \`node scripts/ensure-chromium.mjs\` (npm test's pretest) or set CHROMIUM_PATH.`
    )
  }
  return chromium.launch({ executablePath, args, headless: true, timeout: 60_000 })
}

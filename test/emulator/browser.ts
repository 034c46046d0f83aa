// Headless Chromium for the emulator's end-to-end test: Debian's `chromium` driven by
// playwright-core. A missing browser is a failure with a way out, never a skip.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Where Debian's chromium package puts the browser (override with CHROMIUM_PATH). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// This machine (and CI) has no network: without these, Chromium waits on connections it cannot make.
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A running browser (its one context) with its own fresh profile; close() removes both. */
export async function launchChromium(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: run \`bash scripts/ensure-chromium.sh\` ` +
        "(as root, it installs Debian's chromium package) or set CHROMIUM_PATH.",
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'ams-emulator-chromium-'));
  // launchPersistentContext is what takes a --user-data-dir; a plain launch() refuses that flag.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
    viewport: { width: 1440, height: 900 },
    deviceScaleFactor: 1,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

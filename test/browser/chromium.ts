/** Debian's Chromium driven by playwright-core (installed by .ci/run when missing). */
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.FLEETBOOK_CHROMIUM ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--headless', '--no-sandbox'] });
}

// Debian's Chromium through playwright-core for the browser suites: they fail in CI when it is missing
// and skip elsewhere.
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { servicesRequired } from './environment.ts';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** true when Chromium is installed; when it is not: false outside CI (the suite skips), an error in CI */
export function chromiumAvailable(): boolean {
  if (fs.existsSync(CHROMIUM_PATH)) return true;
  if (servicesRequired)
    throw new Error(`Chromium is required (CI=true or REQUIRE_SERVICES=1) but ${CHROMIUM_PATH} does not exist`);
  return false;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    timeout: 30_000,
  });
}

import { chromium, type Browser } from "playwright-core";

/** Debian's chromium, headless, with everything that would reach the network at start turned off. */
export const CHROMIUM_PATH = process.env.ORKA_CHROMIUM ?? "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
    timeout: 30_000,
  });
}

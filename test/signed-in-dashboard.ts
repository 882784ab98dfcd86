// A Sandgate guarded by ADMIN_TOKEN with a Chromium page signed in to its dashboard, as a tester
// starts: for the dashboard's browser tests.
import type { Browser, Page } from "playwright-core";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { launch, signIn, watchedPage } from "./browser-helpers.js";

export interface SignedInDashboard {
  sandbox: Sandbox;
  browser: Browser;
  page: Page;
  /** what watchedPage records: dialogs, script errors, failed loads */
  problems: string[];
  close(): Promise<void>;
}

export async function signedInDashboard(seed: string, token = "qa-token"): Promise<SignedInDashboard> {
  const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed, adminToken: token });
  const browser = await launch().catch(async (err: unknown) => {
    await sandbox.close();
    throw err;
  });
  const close = async () => {
    await browser.close();
    await sandbox.close();
  };
  const { page, problems } = await watchedPage(browser);
  await signIn(page, sandbox.url, token);
  return { sandbox, browser, page, problems, close };
}

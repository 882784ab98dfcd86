// Shared by the Chromium tests: launching Debian's Chromium through playwright-core, a merchant
// site that starts payments and receives the payer's return and the notifications, and where
// screenshots go (docs/screenshots with UPDATE_SCREENSHOTS=1, else a temporary folder).
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { signatureFields } from "../src/domain/signature.js";

export const CHROMIUM = "/usr/bin/chromium";
export const HAS_CHROMIUM = existsSync(CHROMIUM);
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Debian's Chromium, headless; `extra` flags after the usual ones (a host resolver rule, say). */
export const launch = (extra: string[] = []): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: [...ARGS, ...extra] });

const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? resolve(import.meta.dirname, "..", "docs", "screenshots")
  : mkdtempSync(resolve(tmpdir(), "sandgate-shots-"));
mkdirSync(SCREENSHOTS, { recursive: true });
export const screenshot = (page: Page, name: string) => page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`), fullPage: true });

/** A page that records every dialog, console error and uncaught exception: a hostile value that ran shows up here. */
export async function watchedPage(browser: Browser): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems: string[] = [];
  page.on("dialog", (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  // a failed load is reported by its address
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(`console: ${m.text()}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400 && r.request().resourceType() !== "document") problems.push(`${r.status()} ${r.url()}`);
  });
  page.on("pageerror", (err) => problems.push(`pageerror: ${err.message}`));
  return { page, problems };
}

/** Opens the dashboard of a Sandgate started with ADMIN_TOKEN and signs in with it, as a tester does once. */
export async function signIn(page: Page, sandboxUrl: string, token: string): Promise<void> {
  await page.goto(`${sandboxUrl}/__sandbox/`);
  await page.fill("#token", token);
  await page.click("#login");
  await page.waitForSelector("#global-scenario");
}

interface Returned {
  params: Record<string, string>;
  /** encryption_data recomputed with the merchant's key over data/signature-fields.json payer_return */
  signatureValid: boolean;
}

export interface MerchantSite {
  url: string;
  returns: Returned[];
  notifications: Record<string, unknown>[];
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((done) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => done(text));
  });

/**
 * The merchant: GET /pay?... starts a payment at Sandgate server-side (the payment request as
 * query parameters, `op` = checkout or authorise) and hands the payer on: the checkout page as
 * it came, or a redirect to issuer_url. GET /return verifies the signed result; POST /notify
 * records notifications.
 */
export async function startMerchant(sandgate: () => string, key: string): Promise<MerchantSite> {
  const returns: Returned[] = [];
  const notifications: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://merchant.invalid");
      if (url.pathname === "/notify") {
        notifications.push(JSON.parse(await readBody(req)) as Record<string, unknown>);
        res.end("ok");
        return;
      }
      if (url.pathname === "/return") {
        const params = Object.fromEntries(url.searchParams);
        const signed = signatureFields.payer_return.response.map((f) => params[f] ?? "").join("");
        returns.push({
          params,
          signatureValid:
            createHash("sha256")
              .update(signed + key)
              .digest("hex") === params.encryption_data,
        });
        res.setHeader("content-type", "text/html; charset=utf-8");
        res.end(
          `<!DOCTYPE html><title>Merchant: back</title><h1 id="merchant-return">Order ${url.searchParams.get("order_no")?.replace(/[<>&"]/g, "")}: status ${url.searchParams.get("order_status")?.replace(/[<>&"]/g, "")}</h1>`,
        );
        return;
      }
      if (url.pathname === "/pay") {
        const { op = "checkout", ...fields } = Object.fromEntries(url.searchParams);
        const self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const body = { return_url: `${self}/return`, notify_url: `${self}/notify`, encryption_data: "a".repeat(64), ...fields };
        const answer = await fetch(`${sandgate()}/v1/${op}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        const text = await answer.text();
        if (op === "checkout") {
          res.setHeader("content-type", "text/html; charset=utf-8");
          res.end(text);
          return;
        }
        const issuer = /<issuer_url>([^<]+)<\/issuer_url>/.exec(text)?.[1]?.replace(/&amp;/g, "&");
        res.statusCode = issuer ? 302 : 200;
        if (issuer) res.setHeader("location", issuer);
        res.end(issuer ? "" : text);
        return;
      }
      res.statusCode = 404;
      res.end();
    })();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    returns,
    notifications,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

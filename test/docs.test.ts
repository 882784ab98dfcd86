// The README and docs/ stay true: the README is short, its first payment runs as written against a
// listening Sandgate and its answer is signed as it says, every link reaches a page and heading,
// the signature tables are the data's, and the settings page lists every setting.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { OPTIONS } from "../src/config.js";
import { TABS } from "../src/render/dashboard/frame.js";
import { startSandbox, type Sandbox } from "../src/sandbox.js";
import { ROOT, anchors, docPages, fencedBlocks, prose } from "./docs-helpers.js";
import { parseXml, textOf } from "./helpers.js";

const pages = docPages();
const page = (path: string) => pages.find((p) => p.path === path)!;
const readme = page("README.md");

test("the README is short: at most 250 lines", () => {
  expect(readme.text.split("\n").length).toBeLessThanOrEqual(250);
});

test("every relative link of the README and docs/ reaches a file, and a heading of it when it names one", () => {
  const broken: string[] = [];
  for (const { path, text } of pages) {
    for (const [, link] of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?|mailto):/.test(link!)) continue;
      const [file, anchor] = link!.split("#");
      const target = file ? normalize(join(dirname(path), file)) : path;
      if (!existsSync(join(ROOT, target))) broken.push(`${path}: ${link} (no file)`);
      else if (anchor && target.endsWith(".md") && !anchors(readFileSync(join(ROOT, target), "utf8")).has(anchor)) broken.push(`${path}: ${link} (no heading)`);
    }
  }
  expect(broken).toEqual([]);
});

test("the signature page's table is data/signature-fields.json, every operation with its request and answer fields", () => {
  const data = JSON.parse(readFileSync(join(ROOT, "data", "signature-fields.json"), "utf8")) as Record<string, { request: string[]; response: string[] } | string>;
  const list = (fields: string[]) => (fields.length ? fields.map((f) => `\`${f}\``).join(", ") : "—");
  const rows = Object.entries(data)
    .filter(([name]) => name !== "$comment")
    .map(([name, v]) => typeof v === "object" && `| \`${name}\` | ${list(v.request)} | ${list(v.response)} |`);
  const table = /<!-- signature-fields[^>]*-->\n\|[^\n]*\n\|[^\n]*\n([\s\S]*?)\n<!-- \/signature-fields -->/.exec(page("docs/signatures.md").text)?.[1];
  expect(table?.split("\n")).toEqual(rows);
});

test("the settings page lists every setting: its flag and its environment variable", () => {
  const text = page("docs/settings.md").text;
  for (const o of OPTIONS) expect(text, o.flag).toContain(`| \`${o.flag}\` | \`${o.env}\` |`);
});

test("the QA tester's guide lists the dashboard's tabs in the order the page shows them", () => {
  const listed = [...page("docs/qa-tester.md").text.matchAll(/^\| ([A-Z][\w ]*?) \| /gm)].map((m) => m[1]).filter((name) => name !== "Tab");
  expect(listed).toEqual(TABS.map(([name, , label]) => label ?? name[0]!.toUpperCase() + name.slice(1)));
});

describe("the README's first payment, run by bash and curl against a listening Sandgate", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", signatureMode: "strict", watchScenarios: false });
  });
  afterAll(() => sandbox.close());

  // bash and curl as processes of their own (a synchronous call would block this process's server)
  test("is approved with a signature strict mode accepts, and its answer is signed as the README says", async () => {
    const [script] = fencedBlocks(readme, ["sh"]).filter((b) => b.text.includes("/v1/authorise"));
    expect(script).toBeDefined();
    const run = script!.text.replace(/URL=http:\/\/127\.0\.0\.1:8080/, `URL=${sandbox.url}`);
    const xml = parseXml((await promisify(execFile)("bash", ["-euo", "pipefail", "-c", run], { encoding: "utf8", timeout: 10_000 })).stdout);
    expect(textOf(xml.order_status)).toBe("1");
    expect(textOf(xml.result_info)).toBe("0000:Success");
    // "the SHA-256 of merchant_id, account_id, order_no, currency, amount, transaction_id, order_status, result_info and the key"
    const said = /its own `encryption_data`: the SHA-256 of ([^.]*?) and the key/.exec(readme.text.replace(/\n/g, " "))?.[1];
    const fields = [...said!.matchAll(/`(\w+)`/g)].map((m) => m[1]!);
    expect(fields).toEqual(["merchant_id", "account_id", "order_no", "currency", "amount", "transaction_id", "order_status", "result_info"]);
    const signing = fields.map((f) => textOf(xml[f])).join("") + "acme_test_key_7f3a9c21";
    expect(textOf(xml.encryption_data)).toBe(createHash("sha256").update(signing).digest("hex"));
  });

  test("the signature page's example signs a transaction query that strict mode accepts", async () => {
    const [script] = fencedBlocks(page("docs/signatures.md"), ["sh"]);
    const signature = (await promisify(execFile)("bash", ["-euo", "pipefail", "-c", script!.text], { encoding: "utf8", timeout: 10_000 })).stdout.trim();
    const res = await fetch(`${sandbox.url}/v1/retrievalTrans`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ merchant_id: "M10001", account_id: "A10001", encryption_data: signature }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { return_status: string }).return_status).toBe("1");
  });
});

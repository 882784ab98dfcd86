// The files whose code runs on the README's first card payment, under V8 precise coverage: a
// Sandgate started as `npm start` starts it (in memory, the bundled fixtures and default scenario,
// request logging at info), the counts reset once it listens, then one signed `POST /v1/authorise`.
// docs/architecture.md's path page names exactly these files; test/path-page.test.ts holds it to
// them. Run it to see the path after a change: `npx tsx scripts/card-payment-path.ts` prints one
// src/ file per line (`--json FILE` writes them as JSON instead).
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";

const ROOT = resolve(import.meta.dirname, "..");
const SRC = resolve(ROOT, "src");

interface ScriptCoverage {
  url: string;
  functions: { ranges: { count: number }[] }[];
}

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: true });

const { startSandbox } = await import("../src/server/sandbox.js");
// the process's log level (info: a JSON line per request), written where nobody reads it
const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logger: pino({ level: "info" }, pino.destination("/dev/null")) });
const KEY = "acme_test_key_7f3a9c21";
const fields: Record<string, string> = {
  merchant_id: "M10001",
  account_id: "A10001",
  order_no: "ORD-PATH-1",
  currency: "USD",
  amount: "10.00",
  first_name: "Jane",
  last_name: "Doe",
  card: "4242424242424242",
  expiration_year: "2030",
  expiration_month: "12",
  security_code: "123",
  shopper_email: "jane@example.com",
};
fields.encryption_data = createHash("sha256")
  .update(Object.values(fields).join("") + KEY)
  .digest("hex");
const body = new URLSearchParams(fields).toString();

// the server's 1 s timer (due work, notification attempts) runs code of its own: start just after
// one of its rounds, so the payment's few milliseconds fall well before the next
const notifier = sandbox.deps.notifier;
const tick = notifier.tick.bind(notifier);
await new Promise<void>((ticked) => {
  notifier.tick = () => {
    notifier.tick = tick;
    tick();
    ticked();
  };
});
await session.post("Profiler.takePreciseCoverage"); // counts from here on: start-up is done
const answer = await fetch(`${sandbox.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
const text = await answer.text();
const { result } = (await session.post("Profiler.takePreciseCoverage")) as unknown as { result: ScriptCoverage[] };
await session.post("Profiler.stopPreciseCoverage");
await sandbox.close();

if (!text.includes("<result_info>0000:Success</result_info>")) throw new Error(`the payment was not approved: ${text}`);
const ran = result
  .filter((s) => s.url.startsWith("file:") && s.functions.some((f) => f.ranges[0]!.count > 0))
  .map((s) => fileURLToPath(s.url))
  .filter((file) => file.startsWith(`${SRC}/`))
  .map((file) => relative(ROOT, file))
  .sort();
const out = process.argv.indexOf("--json");
if (out > 0) writeFileSync(process.argv[out + 1]!, JSON.stringify(ran));
else console.log(ran.join("\n"));

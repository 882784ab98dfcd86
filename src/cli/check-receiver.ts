// `sandgate check-receiver <url> --merchant <id>`: flags → a receiver check (src/receiver-check)
// in a fresh in-process Sandgate, or in a running one (--sandbox: its POST /__sandbox/receiver-checks)
// → the table on stdout, --json, --junit. Exit 0: every probe passed (warnings allowed); 1: a probe
// failed or the receiver cannot be reached or does not answer; 2: bad input, nothing was checked.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { command, parseFlags } from "./command.js";
import { CheckRefused, type CheckInput } from "../receiver-check/input.js";
import { junitReport, terminalReport } from "../receiver-check/check-report.js";
import type { ReceiverCheckReport } from "../receiver-check/run.js";
import { createAdminClient, SandgateAdminError } from "../api/client.js";
import { callPath } from "../api/operator-calls.js";

interface Flags {
  merchant: string;
  key?: string;
  sandbox?: string;
  transaction?: string;
  junit?: string;
  json?: string;
}

/** a check sends at most 16 requests of at most 5 s each, after making one payment */
const REMOTE_TIMEOUT_MS = 5 * 60_000;

function write(path: string, text: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(path, text);
}

/** The check in a fresh Sandgate of this process, with the bundled fixtures: gone when it ends. */
async function checkHere(input: CheckInput): Promise<ReceiverCheckReport> {
  const { startSandbox } = await import("../server/sandbox.js");
  const { runReceiverCheck } = await import("../receiver-check/run.js");
  const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", watchScenarios: false });
  try {
    return await runReceiverCheck(sandbox.deps, input, sandbox.url);
  } finally {
    await sandbox.close();
  }
}

/** The check in a running Sandgate: its merchants, and its notifications log keeps every probe. */
async function checkThere(base: string, input: CheckInput): Promise<ReceiverCheckReport> {
  const client = createAdminClient(base, process.env.ADMIN_TOKEN, { timeoutMs: REMOTE_TIMEOUT_MS });
  try {
    return await client.checkReceiver(input);
  } catch (err) {
    // the operator API's refusal (or a proxy's page, an older Sandgate: its start), or no answer at all
    if (err instanceof SandgateAdminError)
      throw new CheckRefused(err.status, "refused", `${base} answered HTTP ${err.status}: ${err.message.replace(/^\d+ \w+: /, "")}`);
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`cannot reach the Sandgate at ${base}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
}

export async function run(args: string[]): Promise<number> {
  const program = command(
    "sandgate check-receiver",
    "send a merchant's notification receiver genuine, repeated, forged, tampered, stale, out-of-order and malformed notifications, signed as Sandgate signs them, and say what it gets wrong",
  )
    .argument("<url>", "the receiver: the merchant's notify_url, the only address contacted")
    .requiredOption("--merchant <id>", "the merchant whose notifications they are (a fixture merchant, or one the Sandgate already provisioned)")
    .option("--key <secret>", "sign with this key, the one the receiver verifies with (default: the merchant's key in Sandgate)")
    .option("--sandbox <url>", "check from this running Sandgate (ADMIN_TOKEN is sent when set; default: a fresh one in this process)")
    .option("--transaction <id>", "notify about this payment of the merchant (default: one made for the check)")
    .option("--json <file>", "write the report as JSON")
    .option("--junit <file>", "write the report as JUnit XML (one test case per probe)");
  const flags = parseFlags<Flags>(program, args);
  if (typeof flags === "number") return flags;
  const url = program.args[0]!;
  if (flags.sandbox && !/^https?:\/\/\S+$/i.test(flags.sandbox)) {
    process.stderr.write(`sandgate check-receiver: --sandbox must be an http(s) URL, got "${flags.sandbox}"\n`);
    return 2;
  }
  const input: CheckInput = { url, merchant_id: flags.merchant, transaction_id: flags.transaction, key: flags.key };
  try {
    const base = flags.sandbox?.replace(/\/+$/, "");
    const report = base ? await checkThere(base, input) : await checkHere(input);
    process.stdout.write(terminalReport(report));
    if (base) process.stdout.write(`every request is in ${base}${callPath("listNotifications")}?check=${report.check}\n`);
    if (flags.json) write(flags.json, `${JSON.stringify(report, null, 2)}\n`);
    if (flags.junit) write(flags.junit, junitReport(report));
    return report.passed ? 0 : 1;
  } catch (err) {
    // bad input (CheckRefused), a Sandgate that cannot start or be reached, an unwritable report:
    // one line, never a stack trace
    process.stderr.write(`sandgate check-receiver: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
}

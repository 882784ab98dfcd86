// `sandgate verify <file.har>`: flags → verifyEntries → the table on stdout, --report JSON,
// --junit XML. Exit 0: no differences; 1: differences; 2: the recording or a flag cannot be used.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { command, parseFlags } from "./command.js";
import { HarError, readHar } from "../proof/har.js";
import { junitReport, suggestionsReport, terminalReport } from "../proof/report.js";
import { writeSuggestions } from "../proof/suggest.js";
import { defaultScenariosDir } from "../base/paths.js";
import { verifyEntries } from "../proof/verify.js";

interface Flags {
  against?: string;
  key?: string;
  ignore: string[];
  report?: string;
  junit?: string;
  scenarios?: string;
  scenario?: string;
  fixtures?: string;
  seed?: string;
  suggest?: string;
}

function write(path: string, text: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(path, text);
}

export async function run(args: string[]): Promise<number> {
  const program = command("sandgate verify", "replay a recording (HAR) against Sandgate and list every difference from the recorded answers")
    .argument("<file.har>", "the recording (sandgate record, or a HAR 1.2 file of the gateway's API)")
    .option("--against <url>", "a running Sandgate (default: a fresh one in this process)")
    .option("--key <key>", "the merchant's secret key in Sandgate, to sign the replayed requests (default: the fixture's)")
    .option(
      "--ignore <path>",
      "leave a path out of the comparison (repeatable): respon.risk_score, orders_list[*].transaction_date, risk_score",
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option("--report <file>", "write the report as JSON")
    .option("--junit <file>", "write the report as JUnit XML (one test case per exchange)")
    .option("--scenarios <dir>", "scenario folder of the fresh Sandgate")
    .option("--scenario <name>", "global scenario of the fresh Sandgate")
    .option("--fixtures <dir>", "fixtures of the fresh Sandgate")
    .option("--seed <seed>", "seed of the fresh Sandgate")
    .option(
      "--suggest <dir>",
      "write the scenario rules that close what data can close to <dir>/suggested.json (load with --scenarios <dir> --scenario suggested)",
    );
  const flags = parseFlags<Flags>(program, args);
  if (typeof flags === "number") return flags;
  const file = program.args[0]!;
  if (flags.against && !/^https?:\/\/\S+$/i.test(flags.against)) {
    process.stderr.write(`sandgate verify: --against must be an http(s) URL, got "${flags.against}"\n`);
    return 2;
  }
  try {
    const entries = readHar(file);
    const report = await verifyEntries(entries, { ...flags, suggest: flags.suggest !== undefined, adminToken: process.env.ADMIN_TOKEN });
    process.stdout.write(terminalReport(report));
    if (flags.suggest && report.suggestions)
      process.stdout.write(
        suggestionsReport(report.suggestions, writeSuggestions(flags.suggest, report.suggestions, flags.scenarios ?? defaultScenariosDir), file, flags.suggest),
      );
    if (flags.report) write(flags.report, `${JSON.stringify(report, null, 2)}\n`);
    if (flags.junit) write(flags.junit, junitReport(report));
    return report.differences.length ? 1 : 0;
  } catch (err) {
    // an unusable recording (HarError), a fresh Sandgate that cannot start (a broken scenario
    // folder), an unwritable report: one line, never a stack trace
    process.stderr.write(`sandgate verify: ${err instanceof HarError || err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
}

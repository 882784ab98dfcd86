// The state formats earlier Sandgates wrote, each kept as a golden copy under
// test/earlier-formats/<name>/<engine>/ by scripts/earlier-formats.ts (which runs that commit's own
// code), and read by today's code in test/earlier-formats.test.ts.
import { execFileSync } from "node:child_process";
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * An earlier commit's tree in a folder of its own (git archive), with this checkout's node_modules
 * (the dependencies have not changed major versions since the first format): run it with
 * spawnSandgate's `cwd`. Needs the repository's history.
 */
export function earlierTree(commit: string): string {
  const dir = mkdtempSync(join(tmpdir(), `sandgate-${commit.slice(0, 7)}-`));
  try {
    execFileSync("bash", ["-c", `set -o pipefail; git archive ${commit} | tar -x -C ${dir}`], { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
  } catch (err) {
    throw new Error(`cannot take commit ${commit} out of git (a clone without history?): ${(err as Error).message}`);
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

export interface EarlierFormat {
  name: string;
  commit: string;
  /** what this format is */
  about: string;
  engines: ("data" | "redis")[];
  /** the Redis layout it wrote (1: one sandbox-wide turn; 2: partitioned by merchant) */
  layout?: 1 | 2;
}

/** Each format that landed on main since --data and Redis appeared, oldest first: the last commit before the next change. */
export const EARLIER_FORMATS: readonly EarlierFormat[] = [
  {
    name: "one-file",
    commit: "4dac6e97f5606c3baf0b44edd80995ff99721493",
    about: "--data: the whole state as one JSON file, rewritten on each commit",
    engines: ["data"],
  },
  {
    name: "whole-record-journal",
    commit: "8df328df29098c71d05943ccd363aac9d803696f",
    about: "--data: a snapshot and a journal of whole records; Redis: layout 1 (one sandbox-wide turn)",
    engines: ["data", "redis"],
    layout: 1,
  },
  {
    name: "field-journal",
    commit: "77cb9c2e9d26195a62c9c1e6d0eae81006feaa18",
    about: "--data: the journal writes the fields a change set; Redis: layout 1, the last of it",
    engines: ["data", "redis"],
    layout: 1,
  },
  {
    name: "cards-in-full",
    commit: "95963ce24e0620eb6cf96b4ba63f9f30cee3f7f0",
    about: "cards on file with their full numbers; Redis: layout 2 (partitioned by merchant)",
    engines: ["data", "redis"],
    layout: 2,
  },
  {
    name: "unversioned",
    commit: "881379d1cd94da384bd7ecaeeb906fb979469619",
    about: "the last formats without a version of their own (--data snapshot version 1, Redis layout 2)",
    engines: ["data", "redis"],
    layout: 2,
  },
  {
    name: "merchants-whole",
    commit: "dc913ad1c037515d3cc291a4c46390e5db12b599",
    about: "--data format 2: the journal writes a merchant whole on every change",
    engines: ["data"],
  },
];

/** The seed the golden sandboxes were made with. */
export const GOLDEN_SEED = "golden";
/** Where their notifications go: nothing listened there while they were made, so every one is pending. */
export const GOLDEN_NOTIFY_PORT = 47193;

export const goldenDir = (name: string, engine: "data" | "redis") => fileURLToPath(new URL(`./earlier-formats/${name}/${engine}/`, import.meta.url));

/** What the earlier Sandgate answered, kept beside its files. */
export interface GoldenExpected {
  commit: string;
  engine: "data" | "redis";
  /** what the traffic did (a step an earlier Sandgate could not do is named) */
  steps: string[];
  /** GOLD-0001's card on file */
  token_id: string;
  /** GOLD-0002's subscription, left active */
  recurring_id: string;
  answers: {
    /** /v1/retrievalTrans's orders_list entry of each order */
    payments: Record<string, Record<string, string>>;
    /** /v1/retrievalRefund's refund_orders of SELF-0003, SELF-0012 and SELF-0014 */
    refunds: Record<string, Record<string, string>[]>;
  };
}

// `sandgate state export|import` with no Sandgate running: the store the flags name (--data, or
// --redis-url; DATA_FILE and REDIS_URL as the server reads them) opened in this process, the state
// file written or read (store/state-export.ts) exactly as GET/PUT /__sandbox/state do, and the store
// closed. For a sandbox that is stopped (a --data folder to move, a Redis to fill before the
// replicas start); a running one is exported and imported with `sandgate ctl state`.
// Exit 0: done; 1: the file or the store refused (one line, with the file's line and reason); 2: bad flags.
import { readFileSync, writeFileSync } from "node:fs";
import { command, parseFlags } from "./command.js";
import { resolveConfig, type Config } from "../config/config.js";
import { unitDeps } from "../store/store.js";
import { currentStateFile, putBack } from "../admin/snapshots-api.js";
import { createDeps } from "../server/sandbox.js";
import { readStateFile } from "../store/state-export.js";

interface Flags {
  data?: string;
  redisUrl?: string;
  redisPrefix?: string;
  redisCluster?: boolean;
  fixtures?: string;
  scenarios?: string;
  out?: string;
  merchant?: string;
  all?: boolean;
}

export async function run(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (action !== "export" && action !== "import") {
    process.stderr.write(
      `sandgate state: export or import (sandgate state export --data <file> --out <file>; sandgate state import <file> --data <file>), not ${JSON.stringify(action ?? "")}\n`,
    );
    return 2;
  }
  const program = command(
    `sandgate state ${action}`,
    action === "export"
      ? "write a stopped sandbox's state (or one merchant's) as a state file"
      : "replace a stopped sandbox's state (or the one merchant the file holds) with a state file",
  )
    .option("--data <file>", "the sandbox's --data file [env DATA_FILE]")
    .option("--redis-url <url>", "the sandbox's Redis [env REDIS_URL]")
    .option("--redis-prefix <prefix>", "prefix of its keys [env REDIS_PREFIX]")
    .option("--redis-cluster", "--redis-url is a node of a Redis Cluster")
    .option("--fixtures <dir>", "the fixtures the sandbox starts from [env FIXTURES]")
    .option("--scenarios <dir>", "its scenario folder (a card number a rule names keeps its fingerprint) [env SCENARIOS]");
  if (action === "export")
    program.option("--out <file>", "where to write it (default: standard output)").option("--merchant <id>", "one merchant's records only");
  else
    program
      .argument("<file>", "the state file (from an export or a snapshot)")
      .option("--all", "the file holds every merchant: replace every merchant's records and the clock");
  const flags = parseFlags<Flags>(program, rest);
  if (typeof flags === "number") return flags;
  const { out, merchant, all, ...storeFlags } = flags;
  let config: Config;
  try {
    config = resolveConfig(storeFlags as Partial<Record<keyof Config, string | boolean>>, process.env);
  } catch (err) {
    process.stderr.write(`sandgate state ${action}: ${(err as Error).message}\n`);
    return 2;
  }
  if (!config.data && !config.redisUrl) {
    process.stderr.write(
      `sandgate state ${action}: name the sandbox's store: --data <file> or --redis-url <url> (a sandbox in memory lives only in its process: use sandgate ctl state)\n`,
    );
    return 2;
  }
  const say = (line: string) => process.stderr.write(`${line}\n`);
  try {
    // read and checked whole before the store is opened: a refused file changes nothing
    const file = action === "import" ? readStateFile(readFileSync(program.args[0]!, "utf8")) : undefined;
    if (file?.header.merchant === null && !all)
      throw new Error("the file holds every merchant: importing it replaces every merchant's records and the clock; say so with --all");
    const deps = await createDeps({ ...config, logLevel: "warn" });
    try {
      if (file) {
        await deps.store.unit((store) => putBack(unitDeps(deps, store), file));
        const records = Object.values(file.records).reduce((n, list) => n + list.length, 0);
        say(
          `imported ${records} records (${file.header.merchant === null ? "every merchant" : `merchant ${file.header.merchant}`}) into ${config.redisUrl ? "Redis" : config.data}`,
        );
      } else {
        const text = await deps.store.unit((store) => {
          if (merchant !== undefined && !store.records.merchant(merchant)) throw new Error(`no merchant ${merchant}`);
          return currentStateFile(unitDeps(deps, store), merchant ?? null);
        });
        if (out) writeFileSync(out, text);
        else process.stdout.write(text);
        say(
          `exported ${text.split("\n").length - 3} records (${merchant === undefined ? "every merchant" : `merchant ${merchant}`})${out ? ` to ${out}` : ""}`,
        );
      }
    } finally {
      deps.scenarios.close();
      await deps.notifier.settle();
      await deps.store.close();
    }
    return 0;
  } catch (err) {
    process.stderr.write(`sandgate state ${action}: ${(err as Error).message}\n`);
    return 1;
  }
}

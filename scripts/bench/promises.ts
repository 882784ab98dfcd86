// `npm run bench:promises [-- <name> ...]` (and the end of `npm run bench`): every speed the docs
// promise, as a named scenario measured here beside its baseline, printed with its promise and
// whether the figure holds it. Each server runs in its own process (scripts/bench/processes.ts).
// The tests keep the behaviour behind each promise; these figures are information, never a gate.
import { HAS_REDIS } from "../redis-server.js";
import type { Figure, SpeedPromise } from "./promise.js";
import { accountFlood } from "./promises/account-flood.js";
import { ctlUnreachable } from "./promises/ctl-unreachable.js";
import { documents } from "./promises/documents.js";
import { hostileVerify } from "./promises/hostile-verify.js";
import { hungReceivers } from "./promises/hung-receivers.js";
import { redisBack, redisBackAfterLoad, redisDown } from "./promises/redis-outage.js";
import { replicaKilledOthers, replicaKilledOwn, replicaTerminated } from "./promises/replica-stops.js";
import { slowSockets } from "./promises/slow-sockets.js";

/** Every speed promise of docs/security.md, docs/replicas.md, docs/notifications.md and docs/ctl.md. */
export const PROMISES: SpeedPromise[] = [
  slowSockets,
  hungReceivers,
  accountFlood,
  hostileVerify,
  documents,
  redisDown,
  redisBack,
  redisBackAfterLoad,
  replicaKilledOthers,
  replicaKilledOwn,
  replicaTerminated,
  ctlUnreachable,
];
/** the scenarios that need Debian's redis-server */
const ON_REDIS = new Set([redisDown, redisBack, redisBackAfterLoad, replicaKilledOthers, replicaKilledOwn, replicaTerminated]);

export interface Kept {
  name: string;
  doc: string;
  promise: string;
  bound: number;
  figure?: Figure;
  verdict: "holds" | "falls short" | "not run";
  why?: string;
}

const shown = (n: number, unit: string) => (unit === "×" ? `${n.toFixed(2)}×` : `${Math.round(n)} ${unit}`);

/** Runs the named scenarios (none named: all), one after another; each line is logged as it is known. */
export async function benchPromises(names: string[] = [], log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<Kept[]> {
  const unknown = names.filter((n) => !PROMISES.some((p) => p.name === n));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(", ")} (known: ${PROMISES.map((p) => p.name).join(", ")})`);
  const kept: Kept[] = [];
  for (const p of PROMISES.filter((p) => !names.length || names.includes(p.name))) {
    const row: Kept = { name: p.name, doc: p.doc, promise: p.promise, bound: p.bound, verdict: "not run" };
    if (ON_REDIS.has(p) && !HAS_REDIS) row.why = "redis-server not found";
    else {
      try {
        row.figure = await p.measure();
        row.verdict = row.figure.value < p.bound ? "holds" : "falls short";
      } catch (err) {
        row.why = (err as Error).message;
      }
    }
    kept.push(row);
    log(
      `${p.name}: ${row.figure ? `${shown(row.figure.value, row.figure.unit)} (bound ${shown(p.bound, row.figure.unit)}): ${row.verdict}` : `not run: ${row.why}`}`,
    );
  }
  return kept;
}

/** The promises as a table: each with its figure, its baseline, and whether it holds. */
export function promisesTable(kept: Kept[]): string {
  return [
    "| scenario | promise (where) | figure | quiet | verdict | |",
    "| --- | --- | --- | --- | --- | --- |",
    ...kept.map((k) => {
      const f = k.figure;
      return `| ${k.name} | ${k.promise} (${k.doc}) | ${f ? shown(f.value, f.unit) : "—"} | ${f?.quiet !== undefined ? shown(f.quiet, f.unit) : "—"} | ${k.verdict} | ${f?.note ?? k.why ?? ""} |`;
    }),
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kept = await benchPromises(process.argv.slice(2).filter((a) => !a.startsWith("-")));
  process.stdout.write(`\nSpeed promises (${new Date().toISOString().slice(0, 10)}; figures, not verdicts on a noisy machine):\n\n${promisesTable(kept)}\n`);
}

// A sandbox's state as a file to move or keep (GET/PUT /__sandbox/state, `sandgate ctl state`):
// NDJSON, one line per record, versioned, and closed by a line that counts them, so a truncated
// file is told from a whole one. It holds no card number (the state holds none: cards on file are
// fingerprints and masked numbers). docs/state.md describes it.
//   line 1   {"sandgate_state":1,"merchant":null|"M1","exported_at":…,"seed":…,"clock_offset_ms":…,"counters":{…}}
//   then     {"c":"<collection>","v":{…record…}}   for merchants, tokens, transactions, subscriptions, refunds, payouts, notifications
//   last     {"end":{"records":<n>}}
// Reading refuses, naming the line and the reason, a file that is not one, of another version, cut
// short, or holding a record that is not one; nothing is applied until the whole file has been read.
import { COLLECTIONS } from "./redis/redis-scripts.js";
import { KEY_FIELD, type Collection, type State } from "../domain/types.js";
import type { ClockSetting } from "../domain/clock.js";
import * as stored from "./fixtures/fixtures.js";
import type { z } from "zod";

/** The version this code writes and reads. */
const STATE_FORMAT_VERSION = 1;

interface ExportHeader {
  sandgate_state: number;
  /** the one merchant the file holds, or null: every merchant */
  merchant: string | null;
  exported_at: string;
  seed: string;
  clock_offset_ms: number;
  /** present while the sandbox's clock is frozen: the moment it stands at */
  clock_frozen_at_ms?: number;
  /** a file of every merchant: the scenarios saved from the dashboard's editor, name → text */
  scenarios?: Record<string, string>;
  counters: Record<string, number>;
}

/** What a file holds, read whole and checked. */
export interface StateFile {
  header: ExportHeader;
  records: { [C in Collection]: State[C] };
}

export class StateFileError extends Error {
  override name = "StateFileError";
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

/** The lines of a state (or of one merchant's part of it), header first and the count last. */
export function writeStateFile(
  state: State,
  meta: { merchant: string | null; exportedAt: string; clock: ClockSetting; scenarios?: Record<string, string> },
): string {
  const header: ExportHeader = {
    sandgate_state: STATE_FORMAT_VERSION,
    merchant: meta.merchant,
    exported_at: meta.exportedAt,
    seed: state.seed,
    clock_offset_ms: meta.clock.offset_ms,
    ...(meta.clock.frozen_at === undefined ? {} : { clock_frozen_at_ms: meta.clock.frozen_at }),
    ...(meta.merchant === null && meta.scenarios && Object.keys(meta.scenarios).length ? { scenarios: meta.scenarios } : {}),
    counters: { ...state.counters },
  };
  const lines = [JSON.stringify(header)];
  for (const c of COLLECTIONS) {
    for (const record of state[c] as { merchant_id: string }[]) {
      if (meta.merchant === null || record.merchant_id === meta.merchant) lines.push(JSON.stringify({ c, v: record }));
    }
  }
  lines.push(JSON.stringify({ end: { records: lines.length - 1 } }));
  return `${lines.join("\n")}\n`;
}

/** Records the stores' own schemas check (the fixtures are checked against them): the others need their key and merchant. */
const SHAPES: Partial<Record<Collection, z.ZodType>> = { transactions: stored.transaction, subscriptions: stored.subscription, refunds: stored.refund };

/** Reads a whole file; throws StateFileError naming the first line that is wrong. */
export function readStateFile(text: string): StateFile {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const parse = (i: number): Record<string, unknown> => {
    let value: unknown;
    try {
      value = JSON.parse(lines[i]!);
    } catch {
      throw new StateFileError(i + 1, "not JSON");
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new StateFileError(i + 1, "not a JSON object");
    return value as Record<string, unknown>;
  };
  if (lines.length === 0) throw new StateFileError(1, "the file is empty");
  const header = parse(0);
  if (!("sandgate_state" in header)) throw new StateFileError(1, "not a Sandgate state file (its first line has no sandgate_state)");
  if (header.sandgate_state !== STATE_FORMAT_VERSION) {
    throw new StateFileError(1, `format version ${JSON.stringify(header.sandgate_state)}: this Sandgate reads version ${STATE_FORMAT_VERSION}`);
  }
  if (
    typeof header.seed !== "string" ||
    (header.merchant !== null && typeof header.merchant !== "string") ||
    typeof header.clock_offset_ms !== "number" ||
    (header.clock_frozen_at_ms !== undefined && typeof header.clock_frozen_at_ms !== "number") ||
    (header.scenarios !== undefined && !isTexts(header.scenarios)) ||
    !isCounters(header.counters)
  ) {
    throw new StateFileError(1, "the header's seed, merchant, clock_offset_ms, clock_frozen_at_ms, scenarios or counters is missing or of the wrong type");
  }
  const records = Object.fromEntries(COLLECTIONS.map((c) => [c, []])) as unknown as StateFile["records"];
  const keys = new Map<Collection, Set<string>>(COLLECTIONS.map((c) => [c, new Set()]));
  for (let i = 1; i < lines.length; i++) {
    const line = parse(i);
    if ("end" in line) {
      const end = line.end as { records?: unknown } | null;
      if (i !== lines.length - 1) throw new StateFileError(i + 1, "lines after the end line");
      if (typeof end?.records !== "number" || end.records !== i - 1)
        throw new StateFileError(i + 1, `the end line counts ${JSON.stringify(end?.records)} records, the file holds ${i - 1}`);
      return { header: header as unknown as ExportHeader, records };
    }
    const c = line.c as Collection;
    if (!COLLECTIONS.includes(c)) throw new StateFileError(i + 1, `unknown collection ${JSON.stringify(line.c)}`);
    const v = line.v as Record<string, unknown> | undefined;
    if (v === null || typeof v !== "object" || Array.isArray(v)) throw new StateFileError(i + 1, "no record (v)");
    const key = v[KEY_FIELD[c]];
    if (typeof key !== "string" || key === "") throw new StateFileError(i + 1, `a ${c} record without its ${KEY_FIELD[c]}`);
    if (typeof v.merchant_id !== "string" || v.merchant_id === "") throw new StateFileError(i + 1, `${c} ${key} has no merchant_id`);
    if (header.merchant !== null && v.merchant_id !== header.merchant)
      throw new StateFileError(i + 1, `${c} ${key} is merchant ${v.merchant_id}'s, the file is merchant ${String(header.merchant)}'s`);
    if (keys.get(c)!.has(key)) throw new StateFileError(i + 1, `${c} ${key} twice`);
    keys.get(c)!.add(key);
    const shape = SHAPES[c]?.safeParse(v);
    if (shape && !shape.success)
      throw new StateFileError(i + 1, `${c} ${key}: ${shape.error.issues.map((p) => `${p.path.join(".")} ${p.message}`).join("; ")}`);
    (records[c] as unknown[]).push(v);
  }
  throw new StateFileError(lines.length, "the file ends before its end line (cut short?)");
}

const isCounters = (value: unknown): value is Record<string, number> =>
  value !== null && typeof value === "object" && !Array.isArray(value) && Object.values(value).every((n) => Number.isInteger(n) && (n as number) >= 0);

/** name → text, every value a string */
const isTexts = (v: unknown): v is Record<string, string> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.values(v).every((t) => typeof t === "string");

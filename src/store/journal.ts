// The append-only journal beside the --data snapshot: one JSON line per record a commit changed
// (the whole record, so replaying a line twice is harmless), plus the id counters. A commit costs
// what it changed, not the size of the state; the snapshot (lowdb's file) is rewritten only when
// the journal has grown as large as it (and at start, on reset and on close), so that cost is
// spread over as many commits. Each commit ends with the counters line, so replay applies whole
// commits only: one a crash cut short (a torn line, or lines without their counters line) was
// never acknowledged, and none of it is applied.
import { existsSync, readFileSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import type { Counters } from "../ids.js";
import type { State } from "./types.js";

export type Collection = "merchants" | "transactions" | "refunds" | "tokens" | "payouts" | "subscriptions" | "notifications";

/** The key that names a record of each collection. */
export const KEY_FIELD = {
  merchants: "merchant_id",
  transactions: "transaction_id",
  refunds: "refund_reference_id",
  tokens: "token_id",
  payouts: "transaction_id",
  subscriptions: "recurring_id",
  notifications: "notification_id",
} as const satisfies Record<Collection, string>;

/** A record as a commit left it. */
type RecordLine = { c: Collection; v: Record<string, unknown> };
export type JournalLine = RecordLine | { counters: Counters };

export interface Journal {
  /** bytes appended since the last snapshot */
  readonly size: number;
  /** appends the lines and waits until they are on disk */
  append(lines: readonly string[]): Promise<void>;
  /** empties it (a snapshot now holds everything) */
  clear(): Promise<void>;
  close(): Promise<void>;
}

export async function openJournal(path: string): Promise<Journal> {
  const handle: FileHandle = await open(path, "a");
  let size = (await handle.stat()).size;
  return {
    get size() {
      return size;
    },
    async append(lines) {
      if (!lines.length) return;
      const bytes = Buffer.from(`${lines.join("\n")}\n`);
      try {
        // a write the disk took only part of (it filled up, say) is continued or fails
        for (let done = 0; done < bytes.length; ) {
          const { bytesWritten } = await handle.write(bytes, done, bytes.length - done);
          if (bytesWritten === 0) throw new Error("the journal file takes no more bytes");
          done += bytesWritten;
        }
        await handle.datasync();
      } catch (err) {
        // what this append wrote is taken back: a later append must never follow a torn line
        await handle.truncate(size).catch(() => undefined);
        throw err;
      }
      size += bytes.length;
    },
    async clear() {
      await handle.truncate(0);
      await handle.datasync();
      size = 0;
    },
    close: () => handle.close(),
  };
}

/**
 * Applies the journal at `path` to a state read from the snapshot: each record replaces the one
 * with its key, or is added, a commit at a time (its records, then its counters line). What
 * follows the last counters line, a torn line included, is a commit a crash cut short and is
 * ignored; a line that is not JSON before the end means the file is not what Sandgate wrote, and
 * throws.
 */
export function replayJournal(path: string, state: State): number {
  if (!existsSync(path)) return 0;
  const lines = readFileSync(path, "utf8").split("\n");
  if (lines.at(-1) === "") lines.pop();
  const positions = new Map<Collection, Map<string, number>>();
  const positionsOf = (c: Collection) => {
    let map = positions.get(c);
    if (!map) {
      const list = state[c] as unknown as Record<string, unknown>[];
      map = new Map(list.map((r, i) => [String(r[KEY_FIELD[c]]), i]));
      positions.set(c, map);
    }
    return map;
  };
  const put = (c: Collection, record: Record<string, unknown>) => {
    const list = state[c] as unknown as Record<string, unknown>[];
    const key = String(record[KEY_FIELD[c]]);
    const at = positionsOf(c).get(key);
    if (at === undefined) {
      positionsOf(c).set(key, list.length);
      list.push(record);
    } else list[at] = record;
  };
  let applied = 0;
  let commit: RecordLine[] = [];
  lines.forEach((text, i) => {
    let line: JournalLine;
    try {
      line = JSON.parse(text) as JournalLine;
    } catch (err) {
      if (i === lines.length - 1) return; // torn by a crash: never acknowledged
      throw new Error(`line ${i + 1} is not JSON (${(err as Error).message})`);
    }
    if (!("counters" in line)) {
      if (!(line.c in KEY_FIELD)) throw new Error(`line ${i + 1} names no known collection`);
      commit.push(line);
      return;
    }
    // the commit is whole: its records, then the counters, which only grow (never below the snapshot's)
    for (const { c, v } of commit) put(c, v);
    for (const [kind, n] of Object.entries(line.counters)) state.counters[kind] = Math.max(state.counters[kind] ?? 0, n);
    applied += commit.length + 1;
    commit = [];
  });
  return applied;
}

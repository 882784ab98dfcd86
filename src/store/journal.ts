// The append-only journal beside the --data snapshot: one JSON line per record a commit changed
// (the whole record, so replaying a line twice is harmless), plus the id counters. A commit costs
// what it changed, not the size of the state; the snapshot (lowdb's file) is rewritten only when
// the journal has grown as large as it (and at start, on reset and on close), so that cost is
// spread over as many commits. A crash mid-append leaves a torn last line: it was never
// acknowledged, and replay ignores it.
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

export type JournalLine = { c: Collection; v: Record<string, unknown> } | { counters: Counters };

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
 * with its key, or is added. A last line cut short by a crash is ignored; a bad line before it
 * means the file is not what Sandgate wrote, and throws.
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
  let applied = 0;
  lines.forEach((text, i) => {
    let line: JournalLine;
    try {
      line = JSON.parse(text) as JournalLine;
    } catch (err) {
      if (i === lines.length - 1) return; // torn by a crash: never acknowledged
      throw new Error(`line ${i + 1} is not JSON (${(err as Error).message})`);
    }
    if ("counters" in line) {
      // counters only grow: never step back below what the snapshot already used
      for (const [kind, n] of Object.entries(line.counters)) state.counters[kind] = Math.max(state.counters[kind] ?? 0, n);
    } else {
      if (!(line.c in KEY_FIELD)) throw new Error(`line ${i + 1} names no known collection`);
      const list = state[line.c] as unknown as Record<string, unknown>[];
      const key = String(line.v[KEY_FIELD[line.c]]);
      const at = positionsOf(line.c).get(key);
      if (at === undefined) {
        positionsOf(line.c).set(key, list.length);
        list.push(line.v);
      } else list[at] = line.v;
    }
    applied++;
  });
  return applied;
}

// The journal's lines for records changed in place: whatever a run of changes, commits and
// snapshots did, replaying the journal on the last snapshot gives the state as it is in memory.
// Payments and refunds go as the fields that changed (and the history lines added), so this is
// where a change the line left out would show.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, test } from "vitest";
import { lineEncoder, replayJournal } from "../src/store/journal.js";
import type { Collection } from "../src/domain/types.js";
import type { State } from "../src/domain/types.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-lines-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Rec = Record<string, unknown> & { history?: unknown[] };
const KEYS = { transactions: "transaction_id", refunds: "refund_reference_id", tokens: "token_id" } as const;
type Kind = keyof typeof KEYS;
/** as src/domain/payment.ts does, smaller: the oldest lines go once there are more than this */
const CAP = 2;

const value = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.constant(undefined), fc.record({ x: fc.string({ maxLength: 3 }) }));
const field = fc.constantFrom("state", "note", "payer_request");
// a change to a record looked up first (as requests do: the journal takes its image then) or not
const looked = fc.boolean();
const change = fc.oneof(
  fc.record({ op: fc.constant("add" as const), kind: fc.constantFrom<Kind>("transactions", "refunds", "tokens"), note: value }),
  fc.record({ op: fc.constant("set" as const), pick: fc.nat(), field, value, looked }),
  fc.record({ op: fc.constant("delete" as const), pick: fc.nat(), field, looked }),
  fc.record({ op: fc.constant("history" as const), pick: fc.nat(), lines: fc.integer({ min: 1, max: 3 }), looked }),
  fc.record({ op: fc.constant("new history" as const), pick: fc.nat(), looked }),
  fc.record({ op: fc.constant("drop history" as const), pick: fc.nat(), looked }),
  // a lookup that changes nothing (a query, a refused capture)
  fc.record({ op: fc.constant("lookup" as const), pick: fc.nat() }),
  // a commit: its lines are made, then appended while other requests run, until the append lands or fails
  fc.constant({ op: "commit" as const }),
  fc.constant({ op: "landed" as const }),
  // the append failed: its lines are not on disk, its records are changes again
  fc.constant({ op: "failed" as const }),
  fc.constant({ op: "snapshot" as const }),
  fc.constant({ op: "forget" as const }),
  // a snapshot written behind the commits: started (the journal kept aside), a record of it written, all of it written
  fc.constant({ op: "behind" as const }),
  fc.constant({ op: "slice" as const }),
  fc.constant({ op: "finish" as const }),
);

const A = { op: "add", kind: "transactions", note: "a" } as const;
const T = { op: "add", kind: "transactions", note: 0 } as const;
const set = (value: string, looked = true) => ({ op: "set", pick: 0, field: "note", value, looked }) as const;

describe("journal lines of changed records", () => {
  test("replaying them on the last snapshot gives the state in memory, after any run of changes, commits and snapshots (written behind the commits too, a crash at any point of one)", () => {
    let run = 0;
    fc.assert(
      fc.property(fc.array(change, { maxLength: 60, size: "max" }), (changes) => {
        const state = { counters: {}, transactions: [], refunds: [], tokens: [] } as unknown as State;
        const all: { kind: Kind; rec: Rec }[] = [];
        const dirty = new Map<Rec, Kind>();
        // holding few images: all are dropped (whole lines next) all the time
        const lines = lineEncoder(3);
        /** as the repository does: a record found with nothing uncommitted is imaged */
        const lookup = (kind: Kind, rec: Rec) => {
          if (!dirty.has(rec)) lines.image(kind as Collection, rec);
        };
        let snapshot = JSON.stringify(state);
        let journal: string[] = [];
        let n = 0;
        /** the commit whose lines are being appended (one at a time, as in the store) */
        let appending: { taken: [Rec, Kind][]; made: string[] } | undefined;
        const settle = (lands: boolean) => {
          if (!appending) return;
          const { taken, made } = appending;
          appending = undefined;
          if (lands) return void journal.push(...made, JSON.stringify({ counters: {} }));
          // as the store does when the append fails
          lines.forget();
          const since = [...dirty];
          dirty.clear();
          for (const [rec, kind] of [...taken, ...since]) if (!dirty.has(rec)) dirty.set(rec, kind);
        };
        const commit = () => {
          settle(true);
          const taken = [...dirty];
          const made: string[] = [];
          for (const [rec, kind] of taken) {
            const line = lines.line(kind as Collection, rec);
            if (line !== undefined) made.push(line);
          }
          lines.committed();
          dirty.clear();
          appending = { taken, made };
        };
        // the snapshot written behind: the journal kept aside, what is written so far, where it is
        let behind: { kept: string[]; written: Record<Kind, Rec[]>; at: number; list: number } | undefined;
        let lastKept: string[] | undefined;
        const lists = ["transactions", "refunds", "tokens"] as const;
        /** one more record of the state into the snapshot being written (each as it is now); false when all are */
        const slice = (): boolean => {
          if (!behind) return false;
          for (; behind.list < lists.length; behind.list++, behind.at = 0) {
            const list = state[lists[behind.list]!] as unknown as Rec[];
            if (behind.at < list.length) {
              const rec = list[behind.at++]!;
              // as the store does: one written with changes not yet committed goes whole at its next commit
              if (dirty.has(rec)) lines.wholeNext(rec);
              behind.written[lists[behind.list]!].push(JSON.parse(JSON.stringify(rec)) as Rec);
              return true;
            }
          }
          return false;
        };
        const finish = () => {
          if (!behind) return;
          while (slice());
          snapshot = JSON.stringify({ counters: {}, ...behind.written });
          lastKept = behind.kept;
          behind = undefined;
        };
        for (const c of changes) {
          if (c.op === "add") {
            const rec: Rec = { [KEYS[c.kind]]: `${c.kind}-${++n}`, state: "new", note: c.note };
            (state[c.kind] as unknown as Rec[]).push(rec);
            all.push({ kind: c.kind, rec });
            dirty.set(rec, c.kind);
          } else if (c.op === "commit") commit();
          else if (c.op === "landed") settle(true);
          else if (c.op === "failed") settle(false);
          else if (c.op === "forget") lines.forget();
          else if (c.op === "behind") {
            // one at a time, as in the store, where a commit's append starts it once it landed
            if (behind) continue;
            settle(true);
            behind = { kept: journal, written: { transactions: [], refunds: [], tokens: [] }, at: 0, list: 0 };
            journal = [];
            lastKept = undefined;
          } else if (c.op === "slice") slice();
          else if (c.op === "finish") finish();
          else if (c.op === "snapshot") {
            // as the store does: after the commit on its way, and one written behind ends first; this one
            // has the records changed since the last commit too
            settle(true);
            finish();
            dirty.clear();
            lines.forget();
            snapshot = JSON.stringify(state);
            journal = [];
            lastKept = undefined;
          } else if (all.length) {
            const { kind, rec } = all[c.pick % all.length]!;
            // only payments have a history (a list that grows); other nested values are replaced, never changed in place
            if (c.op === "lookup") {
              lookup(kind, rec);
              continue;
            }
            if (kind !== "transactions" && c.op !== "set" && c.op !== "delete") continue;
            if (c.looked) lookup(kind, rec);
            if (c.op === "set") rec[c.field] = c.value;
            else if (c.op === "delete") delete rec[c.field];
            else if (c.op === "new history") rec.history = [{ event: `fresh ${++n}` }];
            else if (c.op === "drop history") delete rec.history;
            else {
              rec.history ??= [];
              for (let i = 0; i < c.lines; i++) rec.history.push({ event: `line ${++n}` });
              if (rec.history.length > CAP) rec.history.splice(0, rec.history.length - CAP);
            }
            dirty.set(rec, kind);
          }
        }
        commit();
        settle(true);
        /** what a start after a crash now reads: the snapshot, then each journal in turn */
        const replayed = (snapshotText: string, ...journals: string[][]) => {
          const back = JSON.parse(snapshotText) as State;
          for (const j of journals) {
            const path = join(dir, `run-${++run}.journal`);
            writeFileSync(path, j.length ? `${j.join("\n")}\n` : "");
            replayJournal(path, back);
          }
          return back;
        };
        const now = JSON.parse(JSON.stringify(state)) as State;
        // a snapshot half written: the last whole one, the journal kept aside, the new journal
        if (behind) expect(replayed(snapshot, behind.kept, journal)).toEqual(now);
        else expect(replayed(snapshot, journal)).toEqual(now);
        // the new snapshot whole on disk, the kept journal not yet removed
        if (lastKept) expect(replayed(snapshot, lastKept, journal)).toEqual(now);
      }),
      {
        numRuns: 1000,
        // the edges, besides what the random runs find: a field left undefined, a history past its cap, a history dropped
        examples: [
          [[A, { op: "commit" }, { op: "set", pick: 0, field: "note", value: undefined, looked: true }]],
          [
            [
              { op: "add", kind: "transactions", note: 1 },
              { op: "history", pick: 0, lines: 2, looked: true },
              { op: "commit" },
              { op: "history", pick: 0, lines: 1, looked: true },
            ],
          ],
          [
            [
              { op: "add", kind: "transactions", note: 1 },
              { op: "history", pick: 0, lines: 1, looked: true },
              { op: "commit" },
              { op: "drop history", pick: 0, looked: true },
            ],
          ],
          // in a snapshot with an uncommitted change (looked up before it) that is undone
          [[A, T, { op: "commit" }, set("b"), { op: "snapshot" }, set("a")]],
          [[A, T, T, T, { op: "commit" }, { op: "behind" }, set("b"), { op: "slice" }, set("a"), { op: "finish" }]],
          // a change in a snapshot written behind, undone before its commit
          [
            [
              T,
              { op: "snapshot" },
              { op: "behind" },
              { op: "new history", pick: 0, looked: true },
              { op: "finish" },
              { op: "drop history", pick: 0, looked: true },
            ],
          ],
          [[{ op: "add", kind: "refunds", note: "a" }, { op: "commit" }, { op: "behind" }, set("b"), { op: "slice" }, set("a")]],
          // changed back after a snapshot that had the change: the line must not count on what the journal had before it
          [[{ op: "add", kind: "refunds", note: "a" }, { op: "commit" }, set("b"), { op: "snapshot" }, set("a")]],
          // looked up before a snapshot that had an uncommitted change, then changed back
          [[A, { op: "commit" }, { op: "lookup", pick: 0 }, set("b", false), { op: "snapshot" }, set("a", false)]],
          // a commit that failed: its change is not on disk, so the next line must not count on it
          [[A, { op: "commit" }, set("b"), { op: "commit" }, { op: "failed" }, set("c"), { op: "commit" }]],
          [[A, { op: "commit" }, set("b"), { op: "commit" }, { op: "failed" }]],
          // looked up while that append was on its way (the record had no uncommitted change then)
          [[A, { op: "commit" }, set("b"), { op: "commit" }, { op: "lookup", pick: 0 }, { op: "failed" }]],
          // a new record added while the append of an earlier one fails: they stay in the order they were added
          [[T, { op: "commit" }, T, { op: "failed" }]],
          // looked up, not changed by that request; changed later without a lookup
          [[A, { op: "commit" }, { op: "lookup", pick: 0 }, { op: "commit" }, set("b", false), { op: "commit" }]],
          [[A, { op: "commit" }, { op: "lookup", pick: 0 }, set("b", false), { op: "commit" }, set("a", true), { op: "commit" }]],
        ],
      },
    );
  });

  test("a capture-like change is a line of the fields that changed and the history line added", () => {
    const lines = lineEncoder();
    const tx: Rec = { transaction_id: "T1", order_no: "O-1", state: "authorised", captured_amount: "0.00", history: [{ event: "created" }] };
    expect(JSON.parse(lines.line("transactions", tx)!)).toEqual({ c: "transactions", v: tx });
    // the capture looks it up (the journal takes its image), then changes it
    lines.image("transactions", tx);
    tx.state = "paid";
    tx.captured_amount = "10.00";
    tx.history!.push({ event: "capture" });
    expect(JSON.parse(lines.line("transactions", tx)!)).toEqual({
      c: "transactions",
      k: "T1",
      s: { state: "paid", captured_amount: "10.00" },
      h: [1, { event: "capture" }],
    });
    // looked up again, nothing changed: no line
    lines.image("transactions", tx);
    expect(lines.line("transactions", tx)).toBeUndefined();
    // changed without a lookup: whole
    tx.note = "x";
    expect(JSON.parse(lines.line("transactions", tx)!)).toEqual({ c: "transactions", v: tx });
    // records of other collections always go whole
    const token = { token_id: "tok", merchant_id: "M" };
    lines.line("tokens", token);
    expect(JSON.parse(lines.line("tokens", token)!)).toEqual({ c: "tokens", v: token });
  });
});

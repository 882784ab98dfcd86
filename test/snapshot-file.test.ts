// The --data snapshot file: records unchanged since the last snapshot are copied from it as bytes,
// the others stringified. Whatever ran between and during snapshots (records added, changed by
// commits, changed and not yet committed, removed, a whole new state, a write that failed), the
// file read back is the state, field for field.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, test } from "vitest";
import { SnapshotFile } from "../src/store/snapshot-file.js";
import type { State } from "../src/domain/types.js";

const dir = mkdtempSync(join(tmpdir(), "sandgate-snapshot-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Rec = { id: string; note: unknown };
type Lists = { version: number; counters: object; transactions: Rec[]; refunds: Rec[] };
const LISTS = ["transactions", "refunds"] as const;

// texts of every UTF-8 width, so byte positions are not character positions
const note = fc.oneof(fc.string({ maxLength: 8, unit: "grapheme" }), fc.integer(), fc.constant('é😀⟨\u2028"\\'));
const list = fc.constantFrom(...LISTS);
const op = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant("add" as const), list, note }) },
  // changed and committed: the store tells the file
  { weight: 3, arbitrary: fc.record({ op: fc.constant("commit change" as const), list, pick: fc.nat(), note }) },
  // changed, not committed yet (the commit comes later, or the change is undone first)
  fc.record({ op: fc.constant("uncommitted change" as const), list, pick: fc.nat(), note }),
  fc.constant({ op: "commit" as const }),
  fc.record({ op: fc.constant("remove" as const), list, pick: fc.nat() }),
  fc.constant({ op: "new state" as const }),
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("snapshot" as const),
      during: fc.array(fc.record({ list, pick: fc.nat(), note, commit: fc.boolean() }), { maxLength: 4 }),
    }),
  },
  fc.record({ op: fc.constant("failed snapshot" as const), how: fc.constantFrom("no temp file", "mid-way") }),
);

describe("the snapshot file", () => {
  test("read back, it is the state, whatever changed between and during snapshots", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
        const path = join(dir, `state-${++run}.json`);
        const uncommitted = new Set<Rec>();
        const file = new SnapshotFile(path, (r) => uncommitted.has(r as Rec));
        let state: Lists = { version: 1, counters: {}, transactions: [], refunds: [] };
        const write = () => file.write(state as unknown as State);
        let n = 0;
        const pick = (name: (typeof LISTS)[number], at: number) => (state[name].length ? state[name][at % state[name].length] : undefined);
        const change = (r: Rec | undefined, value: unknown, commit: boolean) => {
          if (!r) return;
          r.note = value;
          if (commit) file.changed(r);
          else uncommitted.add(r);
        };
        const commitAll = () => {
          for (const r of uncommitted) file.changed(r);
          uncommitted.clear();
        };
        for (const o of ops) {
          if (o.op === "add") {
            const r = { id: `r${++n}`, note: o.note };
            state[o.list].push(r);
            file.changed(r);
          } else if (o.op === "commit change") change(pick(o.list, o.pick), o.note, true);
          else if (o.op === "uncommitted change") change(pick(o.list, o.pick), o.note, false);
          else if (o.op === "commit") commitAll();
          else if (o.op === "remove") {
            // as a reset of one merchant does: the list is filtered, later records move up
            const gone = pick(o.list, o.pick);
            state[o.list] = state[o.list].filter((r) => r !== gone);
          } else if (o.op === "new state") {
            // as a reset does: new records in a new state
            state = { version: 1, counters: {}, transactions: state.transactions.map((r) => ({ ...r })), refunds: [] };
            uncommitted.clear();
          } else if (o.op === "failed snapshot" && o.how === "no temp file") {
            // the temp file cannot be made: the file at `path` stays the last one
            rmSync(`${path}.tmp`, { force: true });
            mkdirSync(`${path}.tmp`);
            await expect(write()).rejects.toThrow();
            rmSync(`${path}.tmp`, { recursive: true });
          } else if (o.op === "failed snapshot") {
            // it fails once most of it is written (a record that cannot be written as JSON, at the very end)
            state.refunds.push({ id: "unwritable", note: 1n });
            await expect(write()).rejects.toThrow(/BigInt/);
            state.refunds.pop();
          } else {
            // changes made while it is written, each between two slices (after one turn for requests)
            const written = write();
            for (const d of o.during) {
              await new Promise((resolve) => setImmediate(resolve));
              change(pick(d.list, d.pick), d.note, d.commit);
            }
            await written;
            // what changed during it may or may not be in it; the next one has everything
            if (o.during.length) await write();
            expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(JSON.parse(JSON.stringify(state)));
          }
        }
        commitAll();
        await write();
        expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(JSON.parse(JSON.stringify(state)));
      }),
      {
        numRuns: 300,
        // a change committed before a snapshot that fails once it has begun: the next one must not copy the record
        examples: [
          [
            [
              { op: "add", list: "transactions", note: 1 },
              { op: "snapshot", during: [] },
              { op: "commit change", list: "transactions", pick: 0, note: 2 },
              { op: "failed snapshot", how: "mid-way" },
            ],
          ],
        ],
      },
    );
  });

  test("a second snapshot with few changes copies the rest: the records changed are the only ones made again", async () => {
    const path = join(dir, "copy.json");
    const file = new SnapshotFile(path);
    const transactions: Rec[] = Array.from({ length: 1000 }, (_, i) => ({ id: `t${i}`, note: "x".repeat(50) }));
    const state = { version: 1, counters: { transaction: 1000 }, transactions, refunds: [] } as unknown as State;
    await file.write(state);
    transactions[500]!.note = "changed";
    file.changed(transactions[500]);
    // a record stringified again would meet this; one copied as bytes would not
    const spy = { calls: 0 };
    for (const t of transactions) Object.defineProperty(t, "toJSON", { value: () => (spy.calls++, { id: t.id, note: t.note }), enumerable: false });
    await file.write(state);
    expect(spy.calls).toBe(1);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(JSON.parse(JSON.stringify(state)));
  });
});

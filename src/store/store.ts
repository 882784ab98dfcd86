// Runtime state behind lowdb: in memory by default, in a JSON file with --data.
// Handlers mutate `store.data` synchronously (Node runs one at a time, so a request's changes are
// atomic) and then `await store.commit()` before answering: an acknowledged change is on disk.
// lowdb's JSONFile writes through steno (temp file + rename), so the file is never half-written.
import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { Low, Memory } from "lowdb";
import { DataFile } from "lowdb/node";
import { createIds, type Ids } from "../ids.js";
import { loadFixtures, type Fixtures } from "./fixtures.js";
import type { State } from "./types.js";
import { createRepository, type Repository } from "./records.js";

export interface Store {
  readonly data: State;
  /** the records with their indexes: how requests find and add records */
  readonly records: Repository;
  readonly ids: Ids;
  commit(): Promise<void>;
  /** Back to fixtures: all merchants, or only the records of one merchant. */
  reset(merchantId?: string): Promise<void>;
}

export interface StoreOptions {
  fixturesDir: string;
  dataFile: string | undefined;
  seed: string | undefined;
}

export class StoreError extends Error {
  override name = "StoreError";
}

function stateFromFixtures(fixtures: Fixtures, seed: string): State {
  return { version: 1, seed, counters: {}, notifications: [], ...structuredClone(fixtures) };
}

export async function openStore(options: StoreOptions): Promise<Store> {
  const fixtures = loadFixtures(options.fixturesDir);
  const fresh = stateFromFixtures(fixtures, options.seed ?? randomBytes(8).toString("hex"));
  const usesFile = options.dataFile !== undefined;
  // compact JSON: the file is for Sandgate to read back, and pretty-printing costs a third more per write
  const file = () => new DataFile<State>(options.dataFile!, { parse: (text) => JSON.parse(text) as State, stringify: (data) => JSON.stringify(data) });
  const db = usesFile ? new Low<State>(file(), fresh) : new Low<State>(new Memory<State>(), fresh);

  if (usesFile && existsSync(options.dataFile!) && statSync(options.dataFile!).size > 0) {
    try {
      await db.read();
    } catch (err) {
      throw new StoreError(`${options.dataFile}: cannot read state (${(err as Error).message}); move it away or pick another --data file`);
    }
    if (db.data?.version !== 1 || !Array.isArray(db.data.transactions)) {
      throw new StoreError(`${options.dataFile}: not a Sandgate state file (version 1 expected)`);
    }
    if (options.seed !== undefined) db.data.seed = options.seed;
    db.data.notifications ??= [];
    db.data.payouts ??= [];
  }
  await db.write();

  const state = () => db.data;
  let ids = createIds(state().seed, state().counters);
  let records = createRepository(state());

  return {
    get data() {
      return state();
    },
    get ids() {
      return ids;
    },
    get records() {
      return records;
    },
    commit: groupCommit(() => db.write()),
    async reset(merchantId?: string) {
      const initial = stateFromFixtures(fixtures, state().seed);
      if (merchantId === undefined) {
        db.data = initial;
        ids = createIds(initial.seed, initial.counters);
      } else {
        const keep = <T extends { merchant_id: string }>(current: T[], base: T[]) => [
          ...current.filter((r) => r.merchant_id !== merchantId),
          ...base.filter((r) => r.merchant_id === merchantId),
        ];
        const d = state();
        d.merchants = keep(d.merchants, initial.merchants);
        d.tokens = keep(d.tokens, initial.tokens);
        d.transactions = keep(d.transactions, initial.transactions);
        d.subscriptions = keep(d.subscriptions, initial.subscriptions);
        d.refunds = keep(d.refunds, initial.refunds);
        d.payouts = keep(d.payouts, initial.payouts);
        d.notifications = keep(d.notifications, initial.notifications);
      }
      records = createRepository(state());
      await db.write();
    },
  };
}

/**
 * Commits that arrive while a write is on its way share the next write: each caller's changes (made
 * before it called) are on disk when its promise resolves, and the state is serialised once per
 * write rather than once per request.
 */
function groupCommit(write: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const start = (): Promise<void> => {
    const current = write().finally(() => {
      if (running === current) running = undefined;
    });
    running = current;
    return current;
  };
  return () => {
    if (!running) return start();
    next ??= running.then(
      () => {
        next = undefined;
        return start();
      },
      () => {
        next = undefined;
        return start();
      },
    );
    return next;
  };
}

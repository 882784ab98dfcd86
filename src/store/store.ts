// The store's contract: what a unit of work is handed (store.unit(work): work(view)), the scopes a
// unit covers, the shelves state files are kept on, and the errors every store throws. The stores:
// one process's beside this file (memory-store.ts: in memory, or with --data a snapshot file and a
// journal), the shared one in redis/; fixtures/ is the initial state both start from.
import type { Ids } from "../domain/ids.js";
import type { Repository } from "../domain/records.js";
import type { State } from "../domain/types.js";
import type { Clock } from "../domain/clock.js";
import type { ScenarioRegistry } from "../scenarios/registry.js";
import type { RequestLog } from "./request-log.js";

/** What replicas share besides records (the sandbox clock, the scenario choice, nth-call counts): handed to a shared store. */
export interface SharedParts {
  clock: Clock;
  scenarios: ScenarioRegistry;
  requests: RequestLog;
}

/** What a unit of work is handed: the same parts (Deps), with the unit's own view of the store (store.unit hands it over). */
export const unitDeps = <D extends { store: Store }>(deps: D, store: Store): D => (store === deps.store ? deps : { ...deps, store });

export interface Store {
  /** "memory", "file" (--data) or "redis" (--redis-url: one state for every replica) */
  readonly kind: "memory" | "file" | "redis";
  readonly data: State;
  /** the records with their indexes: how requests find, add and mark records */
  readonly records: Repository;
  readonly ids: Ids;
  /**
   * Writes what changed since the last commit (nothing to do in memory). `last`: the unit changes
   * nothing more after it (a gateway operation's one commit), so a shared store may give the
   * merchant's turn back in the same trip.
   */
  commit(last?: boolean): Promise<void>;
  /**
   * Runs `work` as one unit, handing it the unit's own view of the store (its records, ids, commit,
   * and the units opened inside it): everything it reads and changes through that view, commits
   * included, is atomic with
   * respect to every other unit. In one process that is already so (handlers change state
   * synchronously); with a shared store the unit waits for the sandbox-wide turn, starts from
   * the latest state, and every other replica's next unit starts from its changes. Durability is
   * commit()'s, as in one process. A unit opened inside another one is part of it. Work that waits on something slow (a notification's POST)
   * stays outside units.
   */
  unit<T>(work: (store: Store) => T | Promise<T>, scope?: UnitScope): Promise<T>;
  /**
   * The merchant whose record this is (a payer page, a payment, ...), for a unit to name it before
   * it starts: a shared store partitions by merchant. Undefined when the store cannot tell (one
   * process: every unit sees everything) or no such record exists.
   */
  locate(kind: Locatable, id: string): Promise<string | undefined>;
  /** The units to run for time-driven work due by `now` (sandbox time): one per merchant with due work, or one that sees everything. */
  dueScopes(now: Date): Promise<(UnitScope | undefined)[]>;
  /** a shared store keeps these in step across replicas (nothing to do otherwise) */
  share(parts: SharedParts): void;
  /** Back to fixtures: all merchants, or only the records of one merchant. */
  reset(merchantId?: string): Promise<void>;
  /**
   * The state replaced by `to` (an imported file): all of it (seed and counters too), or one
   * merchant's records only, every other merchant's kept. Written before it returns.
   */
  restore(to: State, merchantId?: string): Promise<void>;
  /** QA snapshots: state files kept by name where the state is kept (memory, beside the --data file, Redis) */
  readonly snapshots: Shelf;
  /** what replicas say to each other outside units: a shared store's (one process needs none) */
  readonly crosstalk?: Crosstalk;
  /** a last snapshot, and the journal file removed */
  close(): Promise<void>;
}

/**
 * What replicas say to each other outside units (`sandgate listen` needs it: which replica holds a
 * merchant's listener, its offers and answers). Marks: names a replica says it holds, said again
 * every few seconds, lapsing a few seconds after it stops. Messages: to every other replica.
 */
export interface Crosstalk {
  /** The names held here are `names()`: said now and every 2 s until stop(); `now()` says them at once (one was added). */
  mark(names: () => Iterable<string>): { now(): void; stop(): void };
  /** Another replica holds `name`, as it last said (every 2 s; what it said lapses 6 s later). */
  markedElsewhere(name: string): boolean;
  /** Sends `message` (JSON) to every other replica's hearers. */
  tell(message: unknown): void;
  /** What other replicas tell (JSON as sent). */
  hear(hearer: (message: unknown) => void): void;
}

/**
 * What a unit works on. One merchant: its records only, locked for the unit with a shared store
 * (other merchants' units run meanwhile). `none`: no records (a request refused before it reads
 * any, or naming a record that does not exist). Left out: everything, read-only across merchants
 * with a shared store (lists, settings such as the scenario choice and the clock). `again`: the
 * unit's work may be run again from its start when its turn was lost before anything of it was
 * written (TurnLost): it does nothing outside the store before it commits (a gateway request).
 */
export type UnitScope = { merchant: string; again?: true } | { none: true };

/** Texts kept by name (snapshots): in memory, in a folder, or in a Redis hash. */
export interface Shelf {
  put(name: string, text: string): Promise<void>;
  get(name: string): Promise<string | undefined>;
  /**
   * Each text's first and last line, by name, sorted: what a list shows (a state file's header and
   * count), without reading whole texts of many megabytes.
   */
  ends(): Promise<ShelfEnds[]>;
  /** false when there was none by that name */
  remove(name: string): Promise<boolean>;
}

export interface ShelfEnds {
  name: string;
  first: string;
  last: string;
}

/** A text's first and last line (a final newline is not a line). */
export function endsOf(name: string, text: string): ShelfEnds {
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  const firstEnd = body.indexOf("\n");
  return { name, first: firstEnd < 0 ? body : body.slice(0, firstEnd), last: body.slice(body.lastIndexOf("\n") + 1) };
}

export const byName = (a: ShelfEnds, b: ShelfEnds) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Records found by id alone, whose merchant a shared store looks up before the unit starts. */
export type Locatable = "page" | "transaction" | "refund" | "payout" | "subscription" | "notification";

/**
 * Which records a route's unit of work covers, declared with the route (http/in-unit.ts opens it):
 * - "none": it reads no records;
 * - "all": every merchant's (lists, settings), read-only across merchants on a shared store;
 * - "own": no unit around it: it opens its own around each step, so that none waits on a receiver,
 *   a replay or another request (the clock applies what fell due merchant by merchant);
 * - { merchant }: the merchant the path parameter names;
 * - { record, param }: the merchant of the record the path parameter names (none if no such record).
 */
export type RouteScope = "none" | "all" | "own" | { merchant: string } | { record: Locatable; param: string };

export class StoreError extends Error {
  override name = "StoreError";
}

/** The shared store cannot be reached (or lost this replica's turn): the request is answered 503 I0050 and changes nothing. */
export class StoreUnavailable extends Error {
  override name = "StoreUnavailable";
}

/** What failed, as the 503 its unit answers: a StoreUnavailable (a refusal, a lost turn) as it is, anything else by its message. */
export const asUnavailable = (err: unknown): StoreUnavailable => (err instanceof StoreUnavailable ? err : new StoreUnavailable((err as Error).message));

/** The turn ran out before the unit's changes were written (a replica cut off from Redis for longer than the lease): nothing of them was. */
export class TurnLost extends StoreUnavailable {
  override name = "TurnLost";
}

/** The shared store is there but this replica must not use it (it holds a newer format): the reason is said to every caller. */
export class StoreRefusal extends StoreUnavailable {
  override name = "StoreRefusal";
}

/**
 * Commits that arrive while a write is on its way share the next write: each caller's changes (made
 * before it called) are on disk when its promise resolves, and the disk is synced once per write
 * rather than once per request.
 */
export function groupCommit(write: () => Promise<void>): () => Promise<void> {
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

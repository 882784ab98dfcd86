// Every merchant's records at once, read-only: what the shared store shows outside a merchant's
// unit (the dashboard's and operator API's lists, the notification dispatcher looking for what is
// due). A change is made in the unit of the merchant it belongs to, never through this view.
import { StoreError } from "../store.js";
import type { Repository } from "../../domain/records.js";
import { RUNNING } from "../../domain/clock.js";
import { STATE_VERSION, type State } from "../../domain/types.js";
import { COLLECTIONS } from "./redis-scripts.js";

const readOnly = (): never => {
  throw new StoreError("records change only in a unit of their merchant's (store.unit(work, { merchant }))");
};

const first = <T>(parts: Iterable<Repository>, find: (r: Repository) => T | undefined): T | undefined => {
  for (const r of parts) {
    const found = find(r);
    if (found !== undefined) return found;
  }
  return undefined;
};

/**
 * A state holding every merchant's records, each list in creation order across merchants (records
 * made at the same time, and the merchants themselves, by merchant id), and their highest id
 * counters: the same lists, in the same order, on every replica, whichever partitions it loaded first.
 */
export function mergedState(seed: string, states: Iterable<State>): State {
  const merged = { version: STATE_VERSION, seed, counters: {} } as State;
  const lists = merged as unknown as Record<string, object[]>;
  for (const c of COLLECTIONS) lists[c] = [];
  for (const s of states) {
    for (const c of COLLECTIONS) lists[c]!.push(...(s[c] as object[]));
    // each merchant counts its own ids: the highest of each kind, so a state made of these (an export
    // imported in one process) goes on past every id any of them gave
    for (const [kind, n] of Object.entries(s.counters)) merged.counters[kind] = Math.max(merged.counters[kind] ?? 0, n);
  }
  const at = (r: object) => String((r as { created_at?: unknown }).created_at ?? "");
  const of = (r: object) => String((r as { merchant_id?: unknown }).merchant_id ?? "");
  const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  lists.merchants!.sort((a, b) => order(of(a), of(b)));
  for (const c of COLLECTIONS) if (c !== "merchants") lists[c]!.sort((a, b) => order(at(a), at(b)) || order(of(a), of(b)));
  return merged;
}

/** `parts` gives the merchants' repositories; `byMerchant` the one of a merchant, when held. */
export function mergedRecords(parts: () => Iterable<Repository>, byMerchant: (merchantId: string) => Repository | undefined, state: () => State): Repository {
  const none: readonly never[] = [];
  return {
    get state() {
      return state();
    },
    changing: readOnly,
    changed: readOnly,
    takeChanges: () => [],
    returnChanges: readOnly,
    hasChanges: () => false,
    takeRemoved: () => [],
    apply: readOnly,
    forget: readOnly,
    merchant: (id) => byMerchant(id)?.merchant(id),
    addMerchant: readOnly,
    nowOf: (id, sandboxNow) => byMerchant(id)?.nowOf(id, sandboxNow) ?? sandboxNow,
    clockOf: (id) => byMerchant(id)?.clockOf(id) ?? RUNNING,
    setMerchantClock: readOnly,
    transaction: (id) => first(parts(), (r) => r.transaction(id)),
    transactionsByOrder: (m, o) => byMerchant(m)?.transactionsByOrder(m, o) ?? none,
    transactionByPage: (id) => first(parts(), (r) => r.transactionByPage(id)),
    transactionsOfAccount: (m, a) => byMerchant(m)?.transactionsOfAccount(m, a) ?? none,
    addTransaction: readOnly,
    refund: (ref) => first(parts(), (r) => r.refund(ref)),
    refundsOf: (id) => first(parts(), (r) => (r.refundsOf(id).length ? r.refundsOf(id) : undefined)) ?? none,
    refundsByOrder: (m, o) => byMerchant(m)?.refundsByOrder(m, o) ?? none,
    refundsOfAccount: (m, a) => byMerchant(m)?.refundsOfAccount(m, a) ?? none,
    addRefund: readOnly,
    dueRefund: readOnly,
    token: (id) => first(parts(), (r) => r.token(id)),
    addToken: readOnly,
    payout: (id) => first(parts(), (r) => r.payout(id)),
    payoutByRequest: (m, id) => byMerchant(m)?.payoutByRequest(m, id),
    addPayout: readOnly,
    duePayout: readOnly,
    mayBeDue: readOnly,
    subscription: (id) => first(parts(), (r) => r.subscription(id)),
    subscriptionsOfAccount: (m, a) => byMerchant(m)?.subscriptionsOfAccount(m, a) ?? none,
    addSubscription: readOnly,
    dueSubscription: readOnly,
    scheduleSubscription: readOnly,
    notification: (id) => first(parts(), (r) => r.notification(id)),
    addNotification: readOnly,
    *pendingNotifications() {
      for (const r of parts()) yield* r.pendingNotifications();
    },
    nextDueAt() {
      let at = Infinity;
      for (const r of parts()) at = Math.min(at, r.nextDueAt() ?? Infinity);
      return Number.isFinite(at) ? at : undefined;
    },
  };
}

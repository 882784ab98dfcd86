// The repository every request reaches state through: records by key, the indexes a request
// needs (transactions by merchant+order_no, by payer page, by account; refunds by payment; payouts
// by request_id; ...) and the queues of work that falls due. Every lookup is O(1) (or O(log n) for
// due work), whatever the number of records. The records themselves stay in `state` (the shape
// the state file holds); the indexes are kept in step by the add* methods and rebuilt from the
// state at start and after a reset. Keys never change once a record is added.
import type { CardToken, Merchant, Notification, Payout, Refund, State, Subscription, Transaction } from "./types.js";
import { clockKey, clockSettingOf, RUNNING, timeOn, type ClockSetting } from "./clock.js";
import { DueQueue } from "./due-queue.js";
import { KEY_FIELD, type Collection } from "./types.js";

type RecordOf<C extends Collection> = State[C][number];

/** the kinds of work that fall due on the clock */
type DueWork = "refunds" | "payouts" | "subscriptions";

export interface Repository {
  readonly state: State;
  /**
   * Told just before a merchant is changed in place (then changed()): with --data the journal takes
   * its values, so the commit writes what changed, not the whole merchant. Left out, the merchant is
   * written whole, which is always correct.
   */
  changing(collection: "merchants", record: Merchant): void;
  /** marks a record changed in place (add* marks what it adds), so the next commit writes it */
  changed(collection: Collection, record: object): void;
  /** the records changed since the last call, each once, in the order they first changed */
  takeChanges(): { c: Collection; v: object }[];
  /** changes taken that a write could not put on disk: changes again, ahead of any made since (new records keep their order) */
  returnChanges(changes: readonly { c: Collection; v: object }[]): void;
  /** whether the record has changes the next takeChanges() will give */
  hasChanges(record: object): boolean;
  /** the keys of records forgotten since the last call (old finished notifications) */
  takeRemoved(): { c: Collection; k: string }[];
  /**
   * A record as another replica wrote it (shared store): copied onto the one held here with its key,
   * so every index and every holder of it sees the new fields, or added when new. Not a change to commit.
   */
  apply(collection: Collection, record: object): void;
  /** forgets a record another replica forgot */
  forget(collection: Collection, key: string): void;
  merchant(merchantId: string): Merchant | undefined;
  /** the merchant's own now: the sandbox's, plus how far its clock was moved on its own (or where it stands, frozen) */
  nowOf(merchantId: string, sandboxNow: Date): Date;
  /** the merchant's own clock, over the sandbox's time (none of its own: running with the sandbox's) */
  clockOf(merchantId: string): ClockSetting;
  /** puts a merchant's clock at a new setting (its due records are queued again at their new place); the merchant goes into the next commit */
  setMerchantClock(merchantId: string, setting: ClockSetting): void;
  addMerchant(merchant: Merchant): void;

  transaction(transactionId: string): Transaction | undefined;
  /** a merchant's payments with this order_no, oldest first */
  transactionsByOrder(merchantId: string, orderNo: string): readonly Transaction[];
  /** the payment a payer page belongs to */
  transactionByPage(pageId: string): Transaction | undefined;
  /** an account's payments, oldest first */
  transactionsOfAccount(merchantId: string, accountId: string): readonly Transaction[];
  addTransaction(tx: Transaction): void;

  refund(referenceId: string): Refund | undefined;
  /** a payment's refunds, in order (-01, -02, ...) */
  refundsOf(transactionId: string): readonly Refund[];
  refundsByOrder(merchantId: string, orderNo: string): readonly Refund[];
  refundsOfAccount(merchantId: string, accountId: string): readonly Refund[];
  addRefund(refund: Refund): void;
  /** the next accepted refund whose settlement time has come, earliest first */
  dueRefund(now: Date): Refund | undefined;

  token(tokenId: string): CardToken | undefined;
  addToken(token: CardToken): void;

  payout(transactionId: string): Payout | undefined;
  payoutByRequest(merchantId: string, requestId: string): Payout | undefined;
  addPayout(payout: Payout): void;
  duePayout(now: Date): Payout | undefined;

  subscription(recurringId: string): Subscription | undefined;
  subscriptionsOfAccount(merchantId: string, accountId: string): readonly Subscription[];
  addSubscription(sub: Subscription): void;
  /** the active subscription whose next deduction is due first by `now` */
  dueSubscription(now: Date): Subscription | undefined;
  /** whether one queue of due work (or any) may hold something due by `now`, one look at its earliest entry: the catch-up asks before it calls that work's rules */
  mayBeDue(now: Date, queue?: DueWork): boolean;
  /** after its next_deduction_at changed (or it waits and must be looked at again) */
  scheduleSubscription(sub: Subscription): void;

  notification(notificationId: string): Notification | undefined;
  addNotification(n: Notification): void;
  /** notifications that may still need an attempt (the dispatcher checks each one's due time) */
  pendingNotifications(): Iterable<Notification>;
  /** when the earliest time-driven work falls due (a refund, payout, deduction or notification attempt), ms since the epoch */
  nextDueAt(): number | undefined;
}

const NONE: readonly never[] = [];

/**
 * Records listed under a pair of keys (merchant, then order_no, account or request_id), oldest
 * first. Nested maps, so no combined key string is kept per record; a pair with one record holds
 * it alone, without a list: at 100,000 payments that is most of them.
 */
class PairIndex<T extends object> {
  private readonly outer = new Map<string, Map<string, T | T[]>>();
  add(a: string, b: string, item: T): void {
    let inner = this.outer.get(a);
    if (!inner) this.outer.set(a, (inner = new Map()));
    const held = inner.get(b);
    if (held === undefined) inner.set(b, item);
    else if (Array.isArray(held)) held.push(item);
    else inner.set(b, [held, item]);
  }
  get(a: string, b: string): readonly T[] {
    const held = this.outer.get(a)?.get(b);
    if (held === undefined) return NONE;
    return Array.isArray(held) ? held : [held];
  }
}

/**
 * Finished notifications (delivered, failed, dropped) kept with their attempts; beyond this the
 * oldest finished ones are forgotten. Pending ones are always kept.
 */
export const NOTIFICATION_HISTORY_LIMIT = 10_000;

function listIn<T>(map: Map<string, T[]>, k: string, item: T): void {
  const list = map.get(k);
  if (list) list.push(item);
  else map.set(k, [item]);
}

/**
 * Told of a payment or refund looked up by key (or as due work), or a merchant about to change, that
 * has no uncommitted change: a change to it may follow. With --data, the journal takes its values
 * then, to write only what the change changed (see lineEncoder in journal.ts).
 */
export type OnLookup = (collection: "transactions" | "refunds" | "merchants", record: Transaction | Refund | Merchant) => void;

export function createRepository(state: State, onLookup?: OnLookup): Repository {
  const merchants = new Map<string, Merchant>();
  const transactions = new Map<string, Transaction>();
  const byOrder = new PairIndex<Transaction>();
  const byPage = new Map<string, Transaction>();
  const byAccount = new PairIndex<Transaction>();
  const refunds = new Map<string, Refund>();
  const refundsByTx = new Map<string, Refund[]>();
  const refundsByOrder = new PairIndex<Refund>();
  const refundsByAccount = new PairIndex<Refund>();
  const tokens = new Map<string, CardToken>();
  const payouts = new Map<string, Payout>();
  const payoutsByRequest = new PairIndex<Payout>();
  const subscriptions = new Map<string, Subscription>();
  const subscriptionsByAccount = new PairIndex<Subscription>();
  const notifications = new Map<string, Notification>();
  const pending = new Set<Notification>();
  const dirty = new Map<object, Collection>();
  let removed: { c: Collection; k: string }[] = [];

  // A merchant's clock may run ahead of the sandbox's (its clock_offset_ms) or stand still (its
  // clock_frozen_at_ms): its records' times are its own, and the due queues hold each in the
  // sandbox's time (its time less the offset), so one queue serves every merchant and "due by now"
  // is asked with the sandbox's now. A frozen merchant's record is due at once when its clock
  // stands past it (earliest first), and is not queued at all until the clock moves when not.
  const clockOf = (merchantId: string): ClockSetting => clockSettingOf(merchants.get(merchantId));
  const sandboxTime = (merchantId: string, iso: string) => {
    const clock = clockOf(merchantId);
    const at = Date.parse(iso);
    if (clock.frozen_at === undefined) return at - clock.offset_ms;
    return at <= clock.frozen_at ? at - clock.frozen_at : NaN;
  };
  const refundQueue = new DueQueue<Refund>((r, at) => r.state === "accepted" && sandboxTime(r.merchant_id, r.due_at) === at);
  const payoutQueue = new DueQueue<Payout>((p, at) => p.status === "PENDING" && sandboxTime(p.merchant_id, p.due_at) === at);
  const subscriptionQueue = new DueQueue<Subscription>((s, at) => s.state === "active" && sandboxTime(s.merchant_id, s.next_deduction_at) === at);
  const dueQueues: Record<DueWork, Pick<DueQueue<unknown>, "dueBy">> = { refunds: refundQueue, payouts: payoutQueue, subscriptions: subscriptionQueue };

  /** the subscription's next deduction in the due queue (an inactive one has none) */
  const schedule = (s: Subscription) => {
    if (s.state === "active") subscriptionQueue.push(s, sandboxTime(s.merchant_id, s.next_deduction_at));
  };
  /** every due record of a merchant queued again, at its place in the sandbox's time (after its clock moved) */
  const requeueMerchant = (merchantId: string) => {
    for (const r of refunds.values()) if (r.merchant_id === merchantId) requeue.refunds!(r);
    for (const p of payouts.values()) if (p.merchant_id === merchantId) requeue.payouts!(p);
    for (const s of subscriptions.values()) if (s.merchant_id === merchantId) schedule(s);
  };

  /** Puts a record into every index of its collection. */
  const index: { [C in Collection]: (record: RecordOf<C>) => void } = {
    merchants(m) {
      merchants.set(m.merchant_id, m);
    },
    transactions(tx) {
      transactions.set(tx.transaction_id, tx);
      byOrder.add(tx.merchant_id, tx.order_no, tx);
      byAccount.add(tx.merchant_id, tx.account_id, tx);
      if (tx.page_id) byPage.set(tx.page_id, tx);
    },
    refunds(r) {
      refunds.set(r.refund_reference_id, r);
      listIn(refundsByTx, r.transaction_id, r);
      refundsByOrder.add(r.merchant_id, r.order_no, r);
      refundsByAccount.add(r.merchant_id, r.account_id, r);
      if (r.state === "accepted") refundQueue.push(r, sandboxTime(r.merchant_id, r.due_at));
    },
    tokens(t) {
      tokens.set(t.token_id, t);
    },
    payouts(p) {
      payouts.set(p.transaction_id, p);
      payoutsByRequest.add(p.merchant_id, p.request_id, p);
      if (p.status === "PENDING" && p.due_at) payoutQueue.push(p, sandboxTime(p.merchant_id, p.due_at));
    },
    subscriptions(s) {
      subscriptions.set(s.recurring_id, s);
      subscriptionsByAccount.add(s.merchant_id, s.account_id, s);
      schedule(s);
    },
    notifications(n) {
      notifications.set(n.notification_id, n);
      if (n.state === "pending") pending.add(n);
    },
  };

  /** The record held under a key, per collection. */
  const lookup: { [C in Collection]: (key: string) => RecordOf<C> | undefined } = {
    merchants: (k) => merchants.get(k),
    transactions: (k) => transactions.get(k),
    refunds: (k) => refunds.get(k),
    tokens: (k) => tokens.get(k),
    payouts: (k) => payouts.get(k),
    subscriptions: (k) => subscriptions.get(k),
    notifications: (k) => notifications.get(k),
  };

  /** After a record changed elsewhere: back into the due queue it may now belong to (stale entries are skipped when popped). */
  const requeue: { [C in Collection]?: (record: RecordOf<C>) => void } = {
    refunds: (r) => r.state === "accepted" && refundQueue.push(r, sandboxTime(r.merchant_id, r.due_at)),
    payouts: (p) => p.status === "PENDING" && p.due_at && payoutQueue.push(p, sandboxTime(p.merchant_id, p.due_at)),
    subscriptions: schedule,
    notifications: (n) => n.state === "pending" && pending.add(n),
  };

  /** A new record: into the state, its indexes, and the next commit. */
  function add<C extends Collection>(collection: C, record: RecordOf<C>): void {
    (state[collection] as RecordOf<C>[]).push(record);
    index[collection](record);
    dirty.set(record, collection);
  }

  let compactAt = NOTIFICATION_HISTORY_LIMIT * 1.25;
  function forgetOldNotifications(): void {
    const finished = state.notifications.filter((n) => n.state !== "pending").length;
    let excess = finished - NOTIFICATION_HISTORY_LIMIT;
    if (excess <= 0) return;
    state.notifications = state.notifications.filter((n) => {
      if (excess <= 0 || n.state === "pending") return true;
      excess--;
      notifications.delete(n.notification_id);
      removed.push({ c: "notifications", k: n.notification_id });
      return false;
    });
  }

  /** the record, after telling onLookup of it when it is found with nothing uncommitted */
  function looked<T extends Transaction | Refund>(collection: "transactions" | "refunds", record: T | undefined): T | undefined {
    if (onLookup && record && !dirty.has(record)) onLookup(collection, record);
    return record;
  }

  const indexAll = <C extends Collection>(collection: C) => (state[collection] as RecordOf<C>[]).forEach((record) => index[collection](record));
  (Object.keys(KEY_FIELD) as Collection[]).forEach(indexAll);

  return {
    state,
    changing(collection, record) {
      if (onLookup && !dirty.has(record)) onLookup(collection, record);
    },
    changed(collection, record) {
      dirty.set(record, collection);
    },
    takeChanges() {
      const out = [...dirty].map(([v, c]) => ({ c, v }));
      dirty.clear();
      return out;
    },
    returnChanges(changes) {
      const since = [...dirty];
      dirty.clear();
      for (const { c, v } of changes) dirty.set(v, c);
      for (const [v, c] of since) if (!dirty.has(v)) dirty.set(v, c);
    },
    hasChanges: (record) => dirty.has(record),
    takeRemoved() {
      const out = removed;
      removed = [];
      return out;
    },
    apply(collection, record) {
      const key = (record as Record<string, string>)[KEY_FIELD[collection]]!;
      const held = lookup[collection](key) as Record<string, unknown> | undefined;
      if (!held) {
        (state[collection] as object[]).push(record);
        index[collection](record as never);
        return;
      }
      const clockBefore = collection === "merchants" ? clockKey(clockOf(key)) : "";
      for (const field of Object.keys(held)) if (!(field in record)) delete held[field];
      Object.assign(held, record);
      // keys never change, so only the due queues and the pending set can need it again
      requeue[collection]?.(held as never);
      if (collection === "merchants" && clockKey(clockOf(key)) !== clockBefore) requeueMerchant(key);
    },
    forget(collection, key) {
      if (collection !== "notifications") return;
      const n = notifications.get(key);
      if (!n) return;
      notifications.delete(key);
      pending.delete(n);
      const at = state.notifications.indexOf(n);
      if (at >= 0) state.notifications.splice(at, 1);
    },
    merchant: (id) => merchants.get(id),
    addMerchant: (m) => add("merchants", m),
    nowOf(merchantId, sandboxNow) {
      const clock = clockOf(merchantId);
      return clock === RUNNING ? sandboxNow : new Date(timeOn(clock, sandboxNow.getTime()));
    },
    clockOf,
    setMerchantClock(merchantId, setting) {
      const m = merchants.get(merchantId);
      if (!m) return;
      if (onLookup && !dirty.has(m)) onLookup("merchants", m);
      m.clock_offset_ms = setting.offset_ms;
      if (setting.frozen_at === undefined) delete m.clock_frozen_at_ms;
      else m.clock_frozen_at_ms = setting.frozen_at;
      dirty.set(m, "merchants");
      requeueMerchant(merchantId);
    },

    transaction: (id) => looked("transactions", transactions.get(id)),
    transactionsByOrder: (merchantId, orderNo) => byOrder.get(merchantId, orderNo),
    transactionByPage: (pageId) => looked("transactions", byPage.get(pageId)),
    transactionsOfAccount: (merchantId, accountId) => byAccount.get(merchantId, accountId),
    addTransaction: (tx) => add("transactions", tx),

    refund: (ref) => looked("refunds", refunds.get(ref)),
    refundsOf: (transactionId) => refundsByTx.get(transactionId) ?? NONE,
    refundsByOrder: (merchantId, orderNo) => refundsByOrder.get(merchantId, orderNo),
    refundsOfAccount: (merchantId, accountId) => refundsByAccount.get(merchantId, accountId),
    addRefund: (r) => add("refunds", r),
    dueRefund: (now) => looked("refunds", refundQueue.popDue(now.getTime())),

    token: (id) => tokens.get(id),
    addToken: (t) => add("tokens", t),

    payout: (id) => payouts.get(id),
    payoutByRequest: (merchantId, requestId) => payoutsByRequest.get(merchantId, requestId).at(-1),
    addPayout: (p) => add("payouts", p),
    duePayout: (now) => payoutQueue.popDue(now.getTime()),

    subscription: (id) => subscriptions.get(id),
    subscriptionsOfAccount: (merchantId, accountId) => subscriptionsByAccount.get(merchantId, accountId),
    addSubscription: (s) => add("subscriptions", s),
    dueSubscription: (now) => subscriptionQueue.popDue(now.getTime()),
    mayBeDue(now, queue) {
      const at = now.getTime();
      // asked by every gateway request: three looks, no list made
      return queue ? dueQueues[queue].dueBy(at) : refundQueue.dueBy(at) || payoutQueue.dueBy(at) || subscriptionQueue.dueBy(at);
    },
    scheduleSubscription: schedule,

    notification: (id) => notifications.get(id),
    addNotification(n) {
      add("notifications", n);
      // forgetting costs a pass over the list, done once per quarter of the limit: constant per notification
      if (state.notifications.length > compactAt) {
        forgetOldNotifications();
        compactAt = Math.max(state.notifications.length, NOTIFICATION_HISTORY_LIMIT) * 1.25;
      }
    },
    *pendingNotifications() {
      for (const n of pending) {
        if (n.state === "pending") yield n;
        else pending.delete(n);
      }
    },
    nextDueAt() {
      let at = Math.min(refundQueue.nextAt() ?? Infinity, payoutQueue.nextAt() ?? Infinity, subscriptionQueue.nextAt() ?? Infinity);
      for (const n of this.pendingNotifications()) if (n.due_at) at = Math.min(at, sandboxTime(n.merchant_id, n.due_at));
      return Number.isFinite(at) ? at : undefined;
    },
  };
}

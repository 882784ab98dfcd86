// The state a sandbox starts from, and what a reset puts back: shared by the embedded store
// (memory or --data) and the shared one (--redis-url).
import type { Fixtures } from "./fixtures.js";
import type { State } from "./types.js";

export function stateFromFixtures(fixtures: Fixtures, seed: string): State {
  return { version: 1, seed, counters: {}, notifications: [], ...structuredClone(fixtures) };
}

/** One merchant back to its fixtures: its records replaced by the initial ones, every other merchant's kept. */
export function resetMerchant(state: State, initial: State, merchantId: string): void {
  const keep = <T extends { merchant_id: string }>(current: T[], base: T[]) => [
    ...current.filter((r) => r.merchant_id !== merchantId),
    ...base.filter((r) => r.merchant_id === merchantId),
  ];
  state.merchants = keep(state.merchants, initial.merchants);
  state.tokens = keep(state.tokens, initial.tokens);
  state.transactions = keep(state.transactions, initial.transactions);
  state.subscriptions = keep(state.subscriptions, initial.subscriptions);
  state.refunds = keep(state.refunds, initial.refunds);
  state.payouts = keep(state.payouts, initial.payouts);
  state.notifications = keep(state.notifications, initial.notifications);
}

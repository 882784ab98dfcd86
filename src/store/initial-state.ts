// The state a sandbox starts from, and what a reset puts back: shared by the embedded store
// (memory or --data) and the shared one (--redis-url).
import { cardOnFileFields } from "../domain/card-on-file.js";
import type { Fixtures } from "./fixtures.js";
import { STATE_VERSION, type State } from "../domain/types.js";

/** The fixtures as state: a fixture token's card number is fingerprinted (its own file names it), never kept. */
export function stateFromFixtures(fixtures: Fixtures, seed: string): State {
  const { tokens, ...rest } = structuredClone(fixtures);
  const onFile = tokens.map(({ card_number, card_masked: _, ...token }) => ({ ...token, ...cardOnFileFields(card_number, true) }));
  return { version: STATE_VERSION, seed, counters: {}, notifications: [], ...rest, tokens: onFile };
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

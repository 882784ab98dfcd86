// What every part of the server is handed at construction: no globals, so tests build their own.
import type { Logger } from "pino";
import type { Clock } from "./clock.js";
import type { Config } from "./config.js";
import type { RequestLog } from "./request-log.js";
import type { Notifier } from "./notify/notifier.js";
import type { PayoutPricing } from "./domain/payout-rules.js";
import type { ScenarioRegistry } from "./scenarios/registry.js";
import type { Store } from "./store/store.js";

export interface Deps {
  config: Config;
  store: Store;
  clock: Clock;
  log: Logger;
  requests: RequestLog;
  scenarios: ScenarioRegistry;
  notifier: Notifier;
  /** fixtures/payout-pricing.json: payout fees, FX rates, clearing systems */
  payoutPricing: PayoutPricing;
}

/** What a unit of work is handed: the same parts, with the unit's own view of the store (store.unit hands it over). */
export const unitDeps = (deps: Deps, store: Store): Deps => (store === deps.store ? deps : { ...deps, store });

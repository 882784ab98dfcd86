// What every part of the server is handed at construction: no globals, so tests build their own.
// Types only (nothing here runs): a unit's own parts are made by unitDeps, in store/store.ts.
import type { Logger } from "pino";
import type { Clock } from "../domain/clock.js";
import type { Config } from "../config/config.js";
import type { RequestLog } from "../store/request-log.js";
import type { Notifier } from "../notify/notifier.js";
import type { PayoutPricing } from "../domain/payout-rules.js";
import type { ScenarioRegistry } from "../scenarios/registry.js";
import type { Store } from "../store/store.js";

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

// What every part of the server is handed at construction: no globals, so tests build their own.
import type { Logger } from "pino";
import type { Clock } from "./clock.js";
import type { Config } from "./config.js";
import type { RequestLog } from "./request-log.js";
import type { Notifier } from "./notify/notifier.js";
import type { Scenario } from "./scenarios/select.js";
import type { Store } from "./store/store.js";

export interface Deps {
  config: Config;
  store: Store;
  clock: Clock;
  log: Logger;
  requests: RequestLog;
  /** the scenario that decides outcomes now */
  scenario(): Scenario;
  notifier: Notifier;
}

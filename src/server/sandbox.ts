// startSandbox(options): an in-process Sandgate with a URL and close(); `npm start` and tests use it.
import { mkdirSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { dirname, resolve } from "node:path";
import type { Server } from "node:http";
import { serverWithin } from "../http/connection-limits.js";
import { pino, type Logger } from "pino";
import { createApp } from "./app.js";
import { createClock, type Clock } from "../domain/clock.js";
import { checkTimings } from "../config/timings.js";
import { DEFAULTS, type Config } from "../config/config.js";
import type { Deps } from "../deps/deps.js";
import { applyDue } from "../schedule/scheduler.js";
import { createNotifier } from "../notify/dispatcher.js";
import { createRequestLog } from "../store/request-log.js";
import { createRegistry } from "../scenarios/registry.js";
import { readSavedScenarios, writableOwnFolder, writeSavedScenarios } from "../scenarios/saved-scenarios.js";
import { coverageMarkdown } from "../scenarios/coverage.js";
import { createAdminClient, type AdminClient } from "../api/client.js";
import { StoreUnavailable } from "../store/store.js";
import { openStore } from "../store/memory-store.js";
import { loadPaymentMethods } from "../store/fixtures/payment-method-profiles.js";
import { loadPayoutPricing } from "../store/fixtures/payout-pricing.js";

export interface Sandbox {
  url: string;
  port: number;
  deps: Deps;
  /** the operator API of this Sandgate as typed calls (setScenario, reset, completePayment, ...) */
  admin: AdminClient;
  close(): Promise<void>;
}

export interface SandboxOptions extends Partial<Config> {
  clock?: Clock;
  logger?: Logger;
  /** reload scenario files when they change (default: on for startSandbox, off for createDeps) */
  watchScenarios?: boolean;
  /** with --data: the journal size that starts a new snapshot (at least the snapshot's own size; 4 MB by default) */
  snapshotAfterBytes?: number;
}

/**
 * In a merchant's own process (a test runner's global setup, a script) Sandgate logs only problems
 * unless told otherwise: a JSON line per request would fill the runner's output. The process
 * (`npm start`, `npx sandgate`, Docker) passes its own level, `info` by default.
 */
const IN_PROCESS_LOG_LEVEL = "warn";

/** Builds the dependencies (store, scenario, clock, log) without listening: for supertest. */
export async function createDeps(options: SandboxOptions = {}): Promise<Deps> {
  const config: Config = { ...DEFAULTS, logLevel: IN_PROCESS_LOG_LEVEL, ...stripUndefined(options) };
  checkTimings(); // a mistake in SANDGATE_TIMINGS stops the start, not the first notification
  const log = options.logger ?? pino({ level: config.logLevel, base: undefined });
  // before the store: a card number kept on file by an older Sandgate is fingerprinted only if a scenario names it
  // the editor saves into a --scenarios folder of the merchant's own when it can write there, else
  // into the state: beside the --data file (or, on Redis, in the shared settings)
  const savedFile = config.data && !config.redisUrl ? `${config.data}.scenarios.json` : undefined;
  const scenarios = createRegistry({
    dir: config.scenarios,
    global: config.scenario,
    watch: options.watchScenarios ?? false,
    ...(writableOwnFolder(config.scenarios) ? { saveDir: config.scenarios } : {}),
    ...(savedFile ? { saved: readSavedScenarios(savedFile), onSaved: (own) => writeSavedScenarios(savedFile, own) } : {}),
    onReload: (errors) => {
      if (errors.length) log.error({ errors }, "scenario reload: broken files keep their previous version");
      else log.info("scenarios reloaded");
    },
  });
  const store = config.redisUrl
    ? // loaded only when asked for: the Redis client is not part of a single process's start
      await (
        await import("../store/redis/redis-store.js")
      ).openRedisStore({
        url: config.redisUrl,
        prefix: config.redisPrefix,
        cluster: config.redisCluster,
        fixturesDir: config.fixtures,
        seed: config.seed,
        namesCard: scenarios.namesCard,
        report: (level, message) => log[level](message),
      })
    : await openStore({
        fixturesDir: config.fixtures,
        dataFile: config.data,
        seed: config.seed,
        snapshotAfterBytes: options.snapshotAfterBytes,
        namesCard: scenarios.namesCard,
        onSnapshotBehindFailed: (err) =>
          log.warn(
            { err: err.message },
            "snapshot written behind the commits failed: the journal keeps every change; the next snapshot holds the commits while it is written",
          ),
      });
  loadPaymentMethods(config.fixtures); // checked at boot like the other fixtures
  const clock = options.clock ?? createClock();
  const notifier = createNotifier({ config, store, clock, log });
  const payoutPricing = loadPayoutPricing(config.fixtures);
  const deps: Deps = { config, store, clock, log, requests: createRequestLog(), scenarios, notifier, payoutPricing };
  store.share({ clock, scenarios, requests: deps.requests });
  // what fell due while nothing ran (a fixture subscription's deductions, ...) happens at boot
  await applyDue(deps);
  return deps;
}

/** --coverage-report PATH: PATH.json and PATH.md (a .json or .md ending is dropped first), all merchants. */
function writeCoverageReport(path: string, deps: Deps): void {
  const base = path.replace(/\.(json|md)$/i, "");
  const report = deps.scenarios.coverage.report();
  mkdirSync(dirname(resolve(base)), { recursive: true });
  writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${base}.md`, coverageMarkdown(report));
}

function stripUndefined(options: SandboxOptions): Partial<Config> {
  const { clock: _c, logger: _l, watchScenarios: _w, snapshotAfterBytes: _s, ...rest } = options;
  return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Partial<Config>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const deps = await createDeps({ watchScenarios: true, ...options });
  const app = createApp(deps);
  const limits = deps.config;
  const server: Server = serverWithin(limits, app);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(deps.config.port, deps.config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // Time-driven changes (refund settlement, ...) happen even when nobody calls.
  // a shared store that is away is said once when it goes and once when it is back, not every second
  let away = false;
  const ticker = setInterval(() => {
    applyDue(deps).then(
      () => {
        if (away) deps.log.warn("shared store reachable again");
        away = false;
        deps.notifier.tick();
      },
      (err: unknown) => {
        if (!(err instanceof StoreUnavailable)) deps.log.error({ err }, "state write failed");
        else if (!away) deps.log.warn({ err: err.message }, "shared store unavailable: requests answer 503 I0050 until it is back");
        away = err instanceof StoreUnavailable;
      },
    );
  }, 1_000);
  ticker.unref();
  const { port } = server.address() as AddressInfo;
  deps.notifier.listening(port);
  const shownHost = deps.config.host === "0.0.0.0" || deps.config.host === "::" ? "127.0.0.1" : deps.config.host;
  const url = `http://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${port}`;
  return {
    url,
    port,
    deps,
    admin: createAdminClient(url, deps.config.adminToken),
    async close() {
      clearInterval(ticker);
      deps.scenarios.close();
      // listeners' streams end, and attempts waiting for their answers fail (retried after a restart)
      deps.notifier.listeners.close();
      await new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // idle keep-alive sockets and requests a scenario left hanging end now
        server.closeAllConnections();
      });
      // notifications already on their way finish (at most their 5 s timeout) and are recorded
      await deps.notifier.settle();
      await deps.store.close();
      if (deps.config.coverageReport) writeCoverageReport(deps.config.coverageReport, deps);
    },
  };
}

// startSandbox(options): an in-process Sandgate with a URL and close(); `npm start` and tests use it.
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { pino, type Logger } from "pino";
import { createApp } from "./app.js";
import { createClock, type Clock } from "./clock.js";
import { DEFAULTS, type Config } from "./config.js";
import type { Deps } from "./deps.js";
import { catchUp } from "./domain/scheduler.js";
import { createRequestLog } from "./request-log.js";
import { loadScenario } from "./scenarios/select.js";
import { openStore } from "./store/store.js";

export interface Sandbox {
  url: string;
  port: number;
  deps: Deps;
  close(): Promise<void>;
}

export interface SandboxOptions extends Partial<Config> {
  clock?: Clock;
  logger?: Logger;
}

/** Builds the dependencies (store, scenario, clock, log) without listening: for supertest. */
export async function createDeps(options: SandboxOptions = {}): Promise<Deps> {
  const config: Config = { ...DEFAULTS, ...stripUndefined(options) };
  const log = options.logger ?? pino({ level: config.logLevel, base: undefined });
  const store = await openStore({ fixturesDir: config.fixtures, dataFile: config.data, seed: config.seed });
  const scenario = loadScenario(config.scenarios, config.scenario);
  // Notifications are recorded nowhere yet: the outbox and dispatcher replace this.
  const notifier = { emit: () => undefined };
  return { config, store, clock: options.clock ?? createClock(), log, requests: createRequestLog(), scenario: () => scenario, notifier };
}

function stripUndefined(options: SandboxOptions): Partial<Config> {
  const { clock: _c, logger: _l, ...rest } = options;
  return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Partial<Config>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const deps = await createDeps(options);
  const app = createApp(deps);
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(deps.config.port, deps.config.host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  server.keepAliveTimeout = 5_000;
  // Time-driven changes (refund settlement, ...) happen even when nobody calls.
  const ticker = setInterval(() => {
    if (catchUp(deps.store.data, deps.clock.now(), deps.store.ids) > 0) {
      deps.store.commit().catch((err: unknown) => deps.log.error({ err }, "state write failed"));
    }
  }, 1_000);
  ticker.unref();
  const { port } = server.address() as AddressInfo;
  const shownHost = deps.config.host === "0.0.0.0" || deps.config.host === "::" ? "127.0.0.1" : deps.config.host;
  return {
    url: `http://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${port}`,
    port,
    deps,
    close: () =>
      new Promise<void>((resolve, reject) => {
        clearInterval(ticker);
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
      }),
  };
}

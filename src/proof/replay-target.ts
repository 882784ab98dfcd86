// Where verify replays a recording: a fresh Sandgate started in this process (its clock following
// the recording's times), or a running one (--against); and the one connection requests go over.
import { readFileSync, readdirSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { join } from "node:path";
import { createClock } from "../domain/clock.js";
import { defaultFixturesDir, defaultScenariosDir } from "../base/paths.js";
import { provisionedKey } from "../domain/merchants.js";
import type { Answer } from "./compare.js";
import { cardsIn } from "./replay.js";
import { callPath } from "../api/operator-calls.js";
import type { VerifyOptions } from "../verify-report/verify-report.js";

export interface Target {
  base: string;
  /**
   * The recorded time of the next exchange: a fresh Sandgate's clock follows the recording, so what
   * time brings (a refund settling, a payout completing) happens at the same point of the sequence
   * as it did at the gateway, whatever the pace of the replay.
   */
  at(recorded: string): void;
  /** applies what fell due by the clock (as the gateway did before a notification it sent) */
  catchUp(): Promise<void>;
  /** sends what is due now (notifications) and waits for it */
  flush(): Promise<void>;
  close(): Promise<void>;
  keyOf(merchantId: string): string;
  cards: string[];
}

/** A fresh in-process Sandgate, or the running one --against names. */
export async function openTarget(options: VerifyOptions, start: number): Promise<Target> {
  const scenariosDir = options.scenarios ?? defaultScenariosDir;
  const cards = cardsIn(
    readdirSync(scenariosDir)
      .filter((f) => /\.(json|ya?ml)$/.test(f) && !f.endsWith(".schema.json"))
      .map((f) => readFileSync(join(scenariosDir, f), "utf8")),
  );
  if (options.against) {
    const base = options.against.replace(/\/+$/, "");
    const fixtureKeys = new Map(
      (JSON.parse(readFileSync(join(options.fixtures ?? defaultFixturesDir, "merchants.json"), "utf8")) as { merchant_id: string; secret_key: string }[]).map(
        (m) => [m.merchant_id, m.secret_key],
      ),
    );
    const headers: Record<string, string> = options.adminToken ? { authorization: `Bearer ${options.adminToken}` } : {};
    return {
      base,
      cards,
      // a running Sandgate keeps its own clock
      at: () => {},
      catchUp: async () => {},
      keyOf: (m) => options.key ?? fixtureKeys.get(m) ?? provisionedKey(m),
      flush: async () => {
        const res = await fetch(`${base}${callPath("deliverNotifications")}`, { method: "POST", headers });
        await res.arrayBuffer();
      },
      close: async () => {},
    };
  }
  const { startSandbox } = await import("../server/sandbox.js");
  const { secretKeyOf } = await import("../domain/merchants.js");
  const { bringUpToDate } = await import("../schedule/scheduler.js");
  const { unitDeps } = await import("../store/store.js");
  let now = start;
  const sandbox = await startSandbox({
    clock: createClock(() => now),
    port: 0,
    host: "127.0.0.1",
    logLevel: "silent",
    watchScenarios: false,
    keepRunning: true,
    seed: options.seed ?? "verify",
    scenarios: scenariosDir,
    ...(options.scenario ? { scenario: options.scenario } : {}),
    ...(options.fixtures ? { fixtures: options.fixtures } : {}),
  });
  return {
    base: sandbox.url,
    cards,
    at: (recorded) => {
      const t = Date.parse(recorded);
      // never backwards: entries are appended as answers complete, so neighbours may be out of order by a few ms
      if (Number.isFinite(t) && t > now) now = t;
    },
    catchUp: async () => {
      await sandbox.deps.store.unit((store) => bringUpToDate(unitDeps(sandbox.deps, store)));
    },
    keyOf: (m) => options.key ?? secretKeyOf(sandbox.deps.store.records, m),
    flush: async () => {
      await sandbox.deps.notifier.drain();
    },
    close: () => sandbox.close(),
  };
}

/** one connection kept open for the whole replay: undici's fetch cost more CPU per request than the comparison */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

export function send(base: string, request: { method: string; path: string; headers: Record<string, string>; body: string | undefined }): Promise<Answer> {
  const body = request.method === "GET" || request.method === "HEAD" ? undefined : request.body;
  const url = new URL(`${base}${request.path}`);
  const headers = body === undefined ? request.headers : { ...request.headers, "content-length": String(Buffer.byteLength(body)) };
  return new Promise((resolve) => {
    // no answer (a scenario's reset or hang, Sandgate gone): status 0 says so in the report
    const none = (err: Error) => resolve({ status: 0, contentType: "", body: `no answer: ${err.message}`, location: "" });
    const req = httpRequest(url, { method: request.method, headers, agent, timeout: ANSWER_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", none);
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: res.headers["content-type"] ?? "",
          body: Buffer.concat(chunks).toString("utf8"),
          location: res.headers.location ?? "",
        }),
      );
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`)));
    req.on("error", none);
    req.end(body);
  });
}

/** a scenario rule may make Sandgate hang (fault: hang): the replay goes on after this */
const ANSWER_TIMEOUT_MS = 30_000;

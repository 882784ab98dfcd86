// sandgate verify: replays a recording, in order, against a fresh in-process Sandgate (or a running
// one), and compares every answer and notification with the recorded one. The path of one
// exchange: prepare the request (replay.ts) → send → learn the ids it issued (id-map.ts) → compare
// (compare.ts). Notifications Sandgate sends meanwhile reach a receiver of verify's own and are
// matched with the recorded ones by event and order.
import { readFileSync, readdirSync } from "node:fs";
import { Agent, createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createClock } from "../clock.js";
import { defaultFixturesDir, defaultScenariosDir } from "../paths.js";
import { provisionedKey } from "../store/merchants.js";
import { compareAnswers, locationTree, type Answer, type Difference, type Found } from "./compare.js";
import { formatOf, readTree } from "./documents.js";
import { HarError, headerOf, kindOf, pathOf, postText, type HarEntry } from "./har.js";
import { IdMap } from "./id-map.js";
import { cardResolver, cardsIn, prepareRequest, SIGNED_PATHS } from "./replay.js";
import { ignoreMatcher } from "./ignore.js";
import { suggest, type ReplayedRequest, type Suggestions } from "./suggest.js";

export interface VerifyOptions {
  /** a running Sandgate's URL; by default a fresh one is started in this process */
  against?: string;
  /** the merchant's key in Sandgate, for every request (default: the fixture's, or a provisioned merchant's) */
  key?: string;
  /** paths left out of the comparison, e.g. respon.risk_score, orders_list[*].transaction_date */
  ignore?: readonly string[];
  /** for the fresh Sandgate: scenario folder, global scenario, fixtures, seed */
  scenarios?: string;
  scenario?: string;
  fixtures?: string;
  seed?: string;
  /** with --against and ADMIN_TOKEN set there: to have it deliver notifications after each exchange */
  adminToken?: string;
  /** also work out the scenario rules that close what data can close (--suggest) */
  suggest?: boolean;
}

export interface ExchangeResult {
  exchange: number;
  kind: "gateway" | "page" | "notification";
  operation: string;
  method: string;
  path: string;
  differences: number;
}

export interface VerifyReport {
  target: string;
  exchanges: ExchangeResult[];
  notifications: { recorded: number; sent: number; compared: boolean };
  differences: Difference[];
  /** with `suggest`: the rules that close what data can close, and the rest as Sandgate defects */
  suggestions?: Suggestions;
}

interface Target {
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

export async function verifyEntries(entries: readonly HarEntry[], options: VerifyOptions = {}): Promise<VerifyReport> {
  if (!entries.some((e) => kindOf(e) === "notification" || SIGNED_PATHS[pathOf(e.request.url)]))
    throw new HarError(`the recording holds no request of this gateway's API (${Object.keys(SIGNED_PATHS).join(", ")}): is it a HAR of another API?`);
  const receiver = await startReceiver();
  // a fresh Sandgate starts at the recording's first moment (see Target.at)
  const first = entries.map((e) => Date.parse(e.startedDateTime)).find(Number.isFinite);
  const target = await openTarget(options, first ?? Date.now());
  try {
    return await replayAll(entries, target, receiver, options);
  } finally {
    await target.close();
    await receiver.close();
  }
}

async function replayAll(entries: readonly HarEntry[], target: Target, receiver: Receiver, options: VerifyOptions): Promise<VerifyReport> {
  const ids = new IdMap();
  const ignored = ignoreMatcher(options.ignore ?? []);
  const cardFor = cardResolver(target.cards);
  const differences: Difference[] = [];
  const exchanges: ExchangeResult[] = [];
  /** Sandgate's notifications, with the exchange after which each arrived */
  const sent: { exchange: number; body: string; contentType: string }[] = [];
  const recordedNotifications: { exchange: number; entry: HarEntry }[] = [];
  const replayCtx = { ids, keyOf: target.keyOf, cardFor, notifyUrl: receiver.url };
  const replayed = new Map<number, ReplayedRequest>();

  for (const [i, entry] of entries.entries()) {
    const exchange = i + 1;
    const kind = kindOf(entry);
    target.at(entry.startedDateTime);
    if (kind === "notification") {
      recordedNotifications.push({ exchange, entry });
      // what time brought before the gateway sent it (a refund settled), Sandgate sends too
      await target.catchUp();
      await target.flush();
      for (const n of receiver.take()) sent.push({ exchange, ...n });
      continue;
    }
    const request = prepareRequest(entry, replayCtx);
    const operation = operationOf(kind, request.path, entry.request.method, request.body);
    const actual = await send(target.base, request);
    const recorded = recordedAnswer(entry);
    if (request.fields) replayed.set(exchange, { operation, fields: request.fields, recorded: recorded.body });
    learn(ids, recorded, actual);
    const found = compareAnswers(recorded, actual, { map: (v) => ids.mapText(v), echoes: request.echoes, ignored });
    differences.push(...found.map((d) => ({ exchange, operation, ...d })));
    exchanges.push({ exchange, kind, operation, method: entry.request.method, path: pathOf(request.path), differences: found.length });
    await target.flush();
    for (const n of receiver.take()) sent.push({ exchange, ...n });
  }

  const compared = recordedNotifications.length > 0;
  if (compared) {
    const results = compareNotifications(recordedNotifications, sent, { map: (v) => ids.mapText(v), ignored });
    differences.push(...results.differences);
    exchanges.push(...results.exchanges);
    exchanges.sort((a, b) => a.exchange - b.exchange);
  }
  differences.sort((a, b) => a.exchange - b.exchange);
  const report: VerifyReport = { target: options.against ?? "a fresh Sandgate", exchanges, notifications: { recorded: recordedNotifications.length, sent: sent.length, compared }, differences };
  if (options.suggest) report.suggestions = suggest(differences, replayed, options.scenario ?? "default");
  return report;
}

/** "authorise", "apm", "capture", …; "page GET /pay/3ds" for a payer page (its id left out, so pages group). */
function operationOf(kind: "gateway" | "page", path: string, method: string, body: string | undefined): string {
  const p = pathOf(path);
  const op = SIGNED_PATHS[p];
  if (op === "authorise" && body && /"payment_method"|(^|&)payment_method=/.test(body) && !/"(card|token_id)"|(^|&)(card|token_id)=/.test(body)) return "apm";
  if (op) return op;
  const parts = p.split("/").filter(Boolean);
  return `${kind === "gateway" ? "gateway" : "page"} ${method} /${parts.slice(0, 2).join("/")}`;
}

function recordedAnswer(entry: HarEntry): Answer {
  const { response } = entry;
  const raw = response.content.text ?? "";
  const body = response.content.encoding === "base64" ? Buffer.from(raw, "base64").toString("utf8") : raw;
  return {
    status: response.status,
    contentType: headerOf(response.headers, "content-type") ?? response.content.mimeType ?? "",
    body,
    location: response.redirectURL || (headerOf(response.headers, "location") ?? ""),
  };
}

/** one connection kept open for the whole replay: undici's fetch cost more CPU per request than the comparison */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function send(base: string, request: { method: string; path: string; headers: Record<string, string>; body: string | undefined }): Promise<Answer> {
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
        resolve({ status: res.statusCode ?? 0, contentType: res.headers["content-type"] ?? "", body: Buffer.concat(chunks).toString("utf8"), location: res.headers.location ?? "" }),
      );
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`)));
    req.on("error", none);
    req.end(body);
  });
}

/** a scenario rule may make Sandgate hang (fault: hang): the replay goes on after this */
const ANSWER_TIMEOUT_MS = 30_000;

/** What this exchange's answers teach about ids: the body's trees, and a redirect's address. */
function learn(ids: IdMap, recorded: Answer, actual: Answer): void {
  if (recorded.location && actual.location) ids.learn(locationTree(recorded.location), locationTree(actual.location));
  const format = formatOf(recorded.contentType, recorded.body);
  if (format === formatOf(actual.contentType, actual.body)) ids.learn(readTree(format, recorded.body), readTree(format, actual.body));
}

interface NotificationKey {
  id: string;
  key: string;
  event: string;
}

/** A notification's id (for duplicates), and what matches it across the two sides: its event and order. */
function notificationKey(body: string, contentType: string, map: (v: string) => string): NotificationKey {
  const fields = fieldsOf(body, contentType);
  const data = (fields.data !== null && typeof fields.data === "object" ? fields.data : {}) as Record<string, unknown>;
  const order = String(data.order_no ?? data.request_id ?? data.recurring_id ?? fields.order_no ?? "");
  const event = String(fields.event ?? "");
  return { id: String(fields.notification_id ?? body), key: `${event}|${map(order)}`, event };
}

/** A JSON or form body's top-level fields; {} when it is neither. */
function fieldsOf(body: string, contentType: string): Record<string, unknown> {
  try {
    const format = formatOf(contentType, body);
    const value: unknown = format === "json" ? JSON.parse(body) : format === "form" ? Object.fromEntries(new URLSearchParams(body)) : {};
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function compareNotifications(
  recorded: { exchange: number; entry: HarEntry }[],
  sent: { exchange: number; body: string; contentType: string }[],
  ctx: { map(v: string): string; ignored(path: string): boolean },
): { differences: Difference[]; exchanges: ExchangeResult[] } {
  const differences: Difference[] = [];
  const exchanges: ExchangeResult[] = [];
  const firstOf = <T extends { k: NotificationKey }>(list: T[]) => list.filter((n, i) => list.findIndex((m) => m.k.id === n.k.id) === i);
  const ours = firstOf(sent.map((n) => ({ ...n, k: notificationKey(n.body, n.contentType, (v) => v) })));
  const theirs = firstOf(
    recorded.map(({ exchange, entry }) => {
      const body = postText(entry) ?? "";
      const contentType = headerOf(entry.request.headers, "content-type") ?? entry.request.postData?.mimeType ?? "";
      return { exchange, entry, body, contentType, k: notificationKey(body, contentType, ctx.map) };
    }),
  );
  const used = new Set<number>();
  for (const r of theirs) {
    const operation = `notification ${r.k.event || "(no event)"}`;
    const match = ours.findIndex((o, i) => !used.has(i) && o.k.key === r.k.key);
    let found: Found[];
    if (match < 0) {
      found = [{ path: "notification", kind: "missing", expected: `${r.k.event} for ${r.k.key.split("|")[1] || "(no order)"}`, actual: "(not sent)" }];
    } else {
      used.add(match);
      const o = ours[match]!;
      const answer = (body: string, contentType: string): Answer => ({ status: 200, contentType, body, location: "" });
      found = compareAnswers(answer(r.body, r.contentType), answer(o.body, o.contentType), { map: ctx.map, echoes: new Map(), ignored: ctx.ignored });
    }
    differences.push(...found.map((d) => ({ exchange: r.exchange, operation, ...d })));
    exchanges.push({ exchange: r.exchange, kind: "notification", operation, method: r.entry.request.method, path: pathOf(r.entry.request.url), differences: found.length });
  }
  ours.forEach((o, i) => {
    if (used.has(i)) return;
    differences.push({ exchange: o.exchange, operation: `notification ${o.k.event}`, path: "notification", kind: "extra", expected: "(not recorded)", actual: `${o.k.event} for ${o.k.key.split("|")[1] || "(no order)"}` });
    const at = exchanges.find((x) => x.exchange === o.exchange);
    if (at) at.differences++;
  });
  return { differences, exchanges };
}

interface Receiver {
  url: string;
  take(): { body: string; contentType: string }[];
  close(): Promise<void>;
}

/** Where Sandgate's notifications go during the replay: answers 200 "ok" and keeps them. */
async function startReceiver(): Promise<Receiver> {
  let got: { body: string; contentType: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ body: Buffer.concat(chunks).toString("utf8"), contentType: req.headers["content-type"] ?? "" });
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/notifications`,
    take: () => {
      const out = got;
      got = [];
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // the notifier's kept-alive connections would hold the close for seconds
        server.closeAllConnections();
      }),
  };
}

/** A fresh in-process Sandgate, or the running one --against names. */
async function openTarget(options: VerifyOptions, start: number): Promise<Target> {
  const scenariosDir = options.scenarios ?? defaultScenariosDir;
  const cards = cardsIn(readdirSync(scenariosDir).filter((f) => /\.(json|ya?ml)$/.test(f) && !f.endsWith(".schema.json")).map((f) => readFileSync(join(scenariosDir, f), "utf8")));
  if (options.against) {
    const base = options.against.replace(/\/+$/, "");
    const fixtureKeys = new Map(
      (JSON.parse(readFileSync(join(options.fixtures ?? defaultFixturesDir, "merchants.json"), "utf8")) as { merchant_id: string; secret_key: string }[]).map((m) => [m.merchant_id, m.secret_key]),
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
        const res = await fetch(`${base}/__sandbox/notifications/deliver`, { method: "POST", headers });
        await res.arrayBuffer();
      },
      close: async () => {},
    };
  }
  const { startSandbox } = await import("../sandbox.js");
  const { secretKeyOf } = await import("../store/merchants.js");
  const { bringUpToDate } = await import("../scheduler.js");
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
      await sandbox.deps.store.unit(() => bringUpToDate(sandbox.deps));
    },
    keyOf: (m) => options.key ?? secretKeyOf(sandbox.deps.store.records, m),
    flush: async () => {
      await sandbox.deps.notifier.drain();
    },
    close: () => sandbox.close(),
  };
}

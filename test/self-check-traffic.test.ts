// The self-check traffic (scripts/self-check/traffic.ts) against a real Sandgate, checked through
// Sandgate's own interfaces: every /v1 operation of GATEWAY_HANDLERS called (the request log), every payer
// page finished, every notification a request can cause received (and the events it leaves out are
// exactly those only time can cause), and a second fresh Sandgate with the same seed answers every
// request with the same status and result codes: what `sandgate verify` relies on.
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GATEWAY_HANDLERS } from "../src/server/app.js";
import type { PaymentState } from "../src/domain/codes.js";
import type { SubscriptionEvent } from "../src/notify/events.js";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import type { PayoutStatus, Refund } from "../src/domain/types.js";
import type { RequestLogEntry } from "../src/store/request-log.js";
import { driveEveryOperation, LEFT_OUT, type TrafficSummary } from "../scripts/self-check/traffic.js";

// Every event Sandgate emits, kept as records over the state types so a new state does not compile
// until it is placed here. payment.<state>: a payment created in or moved to that state (a refund
// notifies refund.<state>, never payment.partially_refunded or payment.refunded).
const PAYMENT_STATES: Record<PaymentState, boolean> = {
  pending: true,
  authorised: true,
  review: true,
  paid: true,
  declined: true,
  cancelled: true,
  partially_refunded: false,
  refunded: false,
};
const REFUND_STATES: Record<Refund["state"], true> = { accepted: true, processed: true, failed: true };
const PAYOUT_STATUSES: Record<PayoutStatus, true> = { PENDING: true, COMPLETED: true, FAILED: true };
const SUBSCRIPTION_EVENTS: Record<SubscriptionEvent, true> = {
  "subscription.deducted": true,
  "subscription.deduction_failed": true,
  "subscription.suspended": true,
  "subscription.finished": true,
  "subscription.cancelled": true,
};
/** The batches' own events (src/gateway/capture.ts, review.ts, cancel.ts) */
const BATCH_EVENTS = ["payment.captured", "payment.cancelled", "payment.review_approved", "payment.review_rejected"];
const keysWhere = (record: Record<string, boolean>) => Object.keys(record).filter((k) => record[k]);
const EVERY_EVENT = new Set([
  ...keysWhere(PAYMENT_STATES).map((s) => `payment.${s}`),
  ...keysWhere(REFUND_STATES).map((s) => `refund.${s}`),
  ...keysWhere(PAYOUT_STATUSES).map((s) => `payout.${s.toLowerCase()}`),
  ...keysWhere(SUBSCRIPTION_EVENTS),
  ...BATCH_EVENTS,
]);

/** Event names spelt out anywhere in src/ ("payment.captured", …): each must be in EVERY_EVENT. */
function eventLiteralsInSource(): Set<string> {
  const src = join(import.meta.dirname, "../src");
  const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
  const text = files.map((f) => readFileSync(join(src, f), "utf8")).join("\n");
  return new Set([...text.matchAll(/["'`]((?:payment|refund|payout|subscription)\.[a-z_]+)["'`]/g)].map((m) => m[1]!));
}

/** A merchant's notification endpoint: answers 200 "ok" and keeps each event name. */
async function startReceiver(): Promise<{ url: string; events: string[]; close(): Promise<void> }> {
  const events: string[] = [];
  const server = createServer((req, res) => {
    events.push(String(req.headers["x-sandbox-event"] ?? ""));
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("ok"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/self-check/notify`,
    events,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What the determinism check compares of one exchange: method, path, status and the result codes and texts. */
function described(method: string, path: string, status: number, location: string, body: string): string {
  const back = location ? new URL(location).searchParams : undefined;
  const results = back ? ["order_status", "result_info"].map((k) => `${k}=${back.get(k) ?? ""}`) : resultFields(body);
  return `${method} ${path} ${status} ${results.join(" ")}`;
}

/** order_status and result_info of XML; every *status, *message, *result and failure_type of JSON; nothing of HTML. */
function resultFields(body: string): string[] {
  const xml = [...body.matchAll(/<(order_status|result_info)>([^<]*)</g)].map((m) => `${m[1]}=${m[2]}`);
  if (xml.length || !body.startsWith("{")) return xml;
  const out: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}[${i}]`));
    else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
    else if (/(status|message|result|failure_type)$/.test(path)) out.push(`${path}=${String(value)}`);
  };
  walk(JSON.parse(body) as unknown, "");
  return out;
}

interface Run {
  sandbox: Sandbox;
  summary: TrafficSummary;
  /** every exchange with the sandbox, as `described` */
  exchanges: string[];
}

/** A fresh Sandgate (seed "self-check") driven by the traffic, every exchange with it noted. */
async function drive(notifyUrl: string): Promise<Run> {
  const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "self-check" });
  const exchanges: string[] = [];
  const realFetch = globalThis.fetch;
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const res = await realFetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.origin === new URL(sandbox.url).origin) {
      const body = await res.clone().text();
      exchanges.push(described(init?.method ?? "GET", url.pathname, res.status, res.headers.get("location") ?? "", body));
    }
    return res;
  });
  try {
    const summary = await driveEveryOperation(sandbox.url, { notifyUrl });
    return { sandbox, summary, exchanges };
  } catch (err) {
    await sandbox.close();
    throw err;
  } finally {
    spy.mockRestore();
  }
}

async function requestLog(sandbox: Sandbox): Promise<RequestLogEntry[]> {
  const res = await fetch(`${sandbox.url}/__sandbox/requests?limit=5000&merchant_id=M10001`);
  return ((await res.json()) as { requests: RequestLogEntry[] }).requests;
}

describe("the self-check traffic", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let first: Run;
  let log: RequestLogEntry[];

  beforeAll(async () => {
    receiver = await startReceiver();
    first = await drive(receiver.url);
    await first.sandbox.deps.notifier.drain();
    log = await requestLog(first.sandbox);
  });
  afterAll(async () => {
    await first?.sandbox.close();
    await receiver?.close();
  });

  it("calls every gateway operation, each answered 200", () => {
    const paths = GATEWAY_HANDLERS.map((op) => op.path).sort();
    expect([...first.summary.operations].sort()).toEqual(paths);
    const gateway = log.filter((e) => e.path.startsWith("/v1/"));
    expect([...new Set(gateway.map((e) => e.path))].sort()).toEqual(paths);
    expect(gateway.filter((e) => e.http_status !== 200)).toEqual([]);
    // every request was signed right (the request log checks it in lenient mode too)
    expect(gateway.filter((e) => !e.signature?.matched).map((e) => e.path)).toEqual([]);
    expect(first.summary.requests).toBe(first.exchanges.length);
  });

  it("finishes every payer page", () => {
    const kinds = log.filter((e) => e.operation === "payer page" && e.http_status === 200).map((e) => e.path.split("/")[2]);
    expect([...new Set(kinds)].sort()).toEqual(["3ds", "apm", "checkout"]);
    expect([...first.summary.pages].sort()).toEqual(["3ds", "apm", "checkout"]);
  });

  it("causes every event a request can cause; the rest need the clock", () => {
    for (const literal of eventLiteralsInSource()) expect(EVERY_EVENT, `${literal} is emitted in src/`).toContain(literal);
    for (const left of Object.keys(LEFT_OUT)) expect(EVERY_EVENT).toContain(left);
    const fromRequests = [...EVERY_EVENT].filter((e) => !(e in LEFT_OUT)).sort();
    expect([...first.summary.expectedEvents].sort()).toEqual(fromRequests);
    const received = new Set(receiver.events);
    expect(first.summary.expectedEvents.filter((e) => !received.has(e))).toEqual([]);
  });

  it("is answered the same by a second fresh Sandgate with the same seed", async () => {
    const second = await drive(receiver.url);
    try {
      expect(second.summary).toEqual(first.summary);
      expect(second.exchanges).toEqual(first.exchanges);
    } finally {
      await second.sandbox.close();
    }
  });
});

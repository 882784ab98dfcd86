// The dispatcher behind deps.notifier: sends due notifications (POST, JSON, signed) with a timeout,
// at most `concurrency` at a time, shared fairly between merchants (each holds a quarter of them at
// most, and waiting merchants take turns: one whose receiver hangs delays only its own), one attempt
// at a time per notification, records every attempt
// and commits it. Due times use the sandbox clock, so advancing it (POST /__sandbox/clock) makes
// retries due. Nothing is sent from emit(): the server's 1 s timer calls tick(), and drain(),
// deliver() and resend() send and wait (operator calls, tests, CI).
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { realTimeOf, type Clock } from "../domain/clock.js";
import type { Config } from "../config/config.js";
import type { Store } from "../store/store.js";
import type { AttemptOutcome, Notification } from "../domain/types.js";
import type { Notifier } from "./notifier.js";
import { attemptBody, enqueueNotification, isDue, nextReason, recordAttempt } from "./outbox.js";
import { secretKeyOf } from "../domain/merchants.js";
import { SCHEDULES } from "./schedule.js";
import { targetCheck } from "./target.js";
import { createFairSlots } from "../base/slots.js";
import { createListeners, type ListenOffer } from "./listeners.js";
import { timing } from "../config/timings.js";

export interface NotifierDeps {
  config: Config;
  store: Store;
  clock: Clock;
  log: Logger;
}

export interface DispatchOptions {
  /** how long one attempt may take, connection and answer included */
  timeoutMs?: number;
  /** attempts under way at once, over all notifications */
  concurrency?: number;
}

const DEFAULT_CONCURRENCY = 8;
const RESPONSE_CHARS = 500;
const USER_AGENT = "Sandgate-Notifications/1";
/** drain() and deliver() stop after this many rounds even if something keeps falling due */
const MAX_ROUNDS = 50;

export function createNotifier(deps: NotifierDeps, options: DispatchOptions = {}): Notifier {
  const timeoutMs = options.timeoutMs ?? timing("notifyTimeoutMs");
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const slots = createFairSlots(concurrency, Math.max(1, Math.floor(concurrency / 4)));
  const target = targetCheck(deps.config);
  const delays = SCHEDULES[deps.config.notifySchedule];
  const listeners = createListeners({ crosstalk: deps.store.crosstalk });
  /** the attempt under way or waiting for a slot, per notification */
  const inFlight = new Map<Notification, Promise<void>>();
  let attemptsMade = 0;

  /** the notification as the store has it now (with a shared store: as every replica left it) */
  const find = async (id: string) => {
    const merchant = await deps.store.locate("notification", id);
    return deps.store.unit((store) => store.records.notification(id), merchant === undefined ? { none: true } : { merchant });
  };
  const shared = deps.store.kind === "redis";
  const replica = randomBytes(6).toString("hex");
  /** another replica is sending it (its claim lapses if that replica dies) */
  const claimedElsewhere = (n: Notification) => n.claim !== undefined && n.claim.by !== replica && Date.parse(n.claim.until) > Date.now();
  const stillStored = (store: Store, n: Notification) => store.records.notification(n.notification_id) === n;

  async function attempt(n: Notification, resend: boolean): Promise<void> {
    const mine = { merchant: n.merchant_id };
    await slots.acquire(n.merchant_id);
    // a merchant with a listener (sandgate listen) gets its notifications through it, not at notify_url
    const listened = listeners.has(n.merchant_id);
    const allowance = listened ? timeoutMs + timing("listenSlackMs") : timeoutMs;
    try {
      // one unit to take it (with a shared store: claimed, so no other replica sends it meanwhile) ...
      const taken = await deps.store.unit(async (store) => {
        // a reset may have removed it, or another attempt delivered it, while it waited
        const sandboxNow = deps.clock.now();
        const now = store.records.nowOf(n.merchant_id, sandboxNow);
        if (!stillStored(store, n) || (!resend && !isDue(n, now)) || claimedElsewhere(n)) return undefined;
        if (shared) {
          n.claim = { by: replica, until: new Date(Date.now() + allowance + timing("notifyClaimSlackMs")).toISOString() };
          store.records.changed("notifications", n);
          await store.commit(); // the claim is in Redis before the POST goes out
        }
        // the key now: the attempt is signed again with its own sent_at, the real time (a receiver's
        // freshness window holds on it however far the merchant's clock was moved); the log dates
        // the attempt by the merchant's clock, as its retries are scheduled
        const sentAt = realTimeOf(deps.clock, sandboxNow).toISOString();
        return {
          number: n.attempts.length + 1,
          reason: resend ? ("resend" as const) : nextReason(n),
          at: now.toISOString(),
          sentAt,
          key: secretKeyOf(store.records, n.merchant_id),
        };
      }, mine);
      if (!taken) return;
      const { number, reason, at, sentAt, key } = taken;
      // ... the POST (or the listener's round trip) outside any unit: a slow receiver holds up nothing else ...
      const sent = { ...n, payload: attemptBody(n.payload, sentAt, key) };
      const refused = listened ? undefined : target.refusal(n.url);
      const outcome: AttemptOutcome = refused
        ? { http_status: null, error: refused, duration_ms: 0, response_body: "", retryable: false }
        : await sendNow(sent, number, listened);
      attemptsMade++;
      // ... and one to record what happened
      await deps.store.unit((store) => {
        if (!stillStored(store, n)) return;
        delete n.claim;
        const { http_status, error, duration_ms, response_body } = outcome;
        recordAttempt(
          n,
          { attempt: number, at, reason, http_status, error, duration_ms, response_body, ...(listened ? { via: "listen" as const } : {}) },
          outcome,
          delays,
          store.records.nowOf(n.merchant_id, deps.clock.now()),
        );
        store.records.changed("notifications", n);
        deps.log.info(
          {
            notification: {
              id: n.notification_id,
              merchant_id: n.merchant_id,
              event: n.event,
              url: n.url,
              attempt: number,
              reason,
              http_status,
              error,
              state: n.state,
            },
          },
          `notification ${n.notification_id} attempt ${number}: ${error || `HTTP ${http_status}`}`,
        );
        return store.commit();
      }, mine);
    } catch (err) {
      deps.log.error({ err, notification_id: n.notification_id }, "notification attempt could not be recorded");
    } finally {
      slots.release(n.merchant_id);
    }
  }

  /** One attempt's request: offered to the merchant's listener (waiting for its report), or POSTed to the notification's url. */
  function sendNow(n: Notification, number: number, listened: boolean): Promise<AttemptOutcome> {
    return listened
      ? listeners.offer(n.merchant_id, offerOf(n, number, timeoutMs), timeoutMs + timing("listenSlackMs"))
      : postNotification(n, number, timeoutMs);
  }

  /** Queues an attempt behind the one already under way for the same notification. */
  function run(n: Notification, resend: boolean): Promise<void> {
    const tracked: Promise<void> = (inFlight.get(n) ?? Promise.resolve())
      .then(() => attempt(n, resend))
      .finally(() => {
        if (inFlight.get(n) === tracked) inFlight.delete(n);
      });
    inFlight.set(n, tracked);
    return tracked;
  }

  function tick(): void {
    const now = deps.clock.now();
    const records = deps.store.records;
    // each notification is due by its merchant's own clock
    for (const n of records.pendingNotifications()) if (!inFlight.has(n) && isDue(n, records.nowOf(n.merchant_id, now))) void run(n, false);
  }

  return {
    emit(event, into) {
      try {
        enqueueNotification(into.records, into.ids, into.records.nowOf(event.merchantId, deps.clock.now()), event);
      } catch (err) {
        deps.log.error({ err, event: event.event, merchant_id: event.merchantId }, "notification could not be queued");
      }
    },
    tick,
    listeners,
    async sendOnce(n, number) {
      const listened = listeners.has(n.merchant_id);
      const outcome = await sendNow(n, number, listened);
      return listened ? { ...outcome, via: "listen" } : outcome;
    },
    listening: (port) => target.listening(port),
    async settle() {
      while (inFlight.size) await Promise.allSettled([...inFlight.values()]);
    },
    async drain() {
      const before = attemptsMade;
      for (let round = 0; round < MAX_ROUNDS; round++) {
        tick();
        if (inFlight.size === 0) break;
        await Promise.all(inFlight.values());
      }
      return attemptsMade - before;
    },
    async deliver(id) {
      const n = await find(id);
      for (let round = 0; n && round < MAX_ROUNDS && (inFlight.has(n) || isDue(n, deps.store.records.nowOf(n.merchant_id, deps.clock.now()))); round++) {
        await (inFlight.get(n) ?? run(n, false));
      }
      return n;
    },
    async resend(id) {
      const n = await find(id);
      if (n) await run(n, true);
      return n;
    },
  };
}

type Sendable = Pick<Notification, "url" | "notification_id" | "event" | "payload" | "raw">;

/**
 * The request of one attempt: its headers, and its body: the payload as JSON, or what a receiver
 * check's probe sent instead (`raw`), so a resend repeats exactly what was sent.
 */
function requestOf(n: Sendable, attempt: number): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      "content-type": n.raw?.content_type ?? "application/json",
      "user-agent": USER_AGENT,
      "x-sandbox-notification-id": n.notification_id,
      "x-sandbox-event": n.event,
      "x-sandbox-attempt": String(attempt),
    },
    body: n.raw?.body ?? JSON.stringify(n.payload),
  };
}

/** An attempt as `sandgate listen` is handed it: the same request a POST to notify_url would be. */
const offerOf = (n: Sendable, attempt: number, timeoutMs: number): ListenOffer => ({
  id: `${n.notification_id}.${attempt}`,
  notification_id: n.notification_id,
  attempt,
  event: n.event,
  url: n.url,
  ...requestOf(n, attempt),
  timeout_ms: timeoutMs,
});

/**
 * One POST of the notification with the real headers; never throws: a failure is an outcome.
 * Exported for the receiver check (receiver-check/).
 */
export const postNotification = (n: Sendable, attempt: number, timeoutMs: number): Promise<AttemptOutcome> =>
  postRequest(n.url, requestOf(n, attempt), timeoutMs);

/** One POST of a notification's request as it is (sandgate listen forwards what it was handed with it); never throws. */
export async function postRequest(url: string, request: { headers: Record<string, string>; body: string }, timeoutMs: number): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await fetch(url, {
      method: "POST",
      ...request,
      // a redirect is not an acknowledgement, and following it could lead back into Sandgate
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    const response_body = await readStart(res);
    const ok = res.status >= 200 && res.status < 300;
    return {
      http_status: res.status,
      error: ok ? "" : `the receiver answered HTTP ${res.status} (a 2xx acknowledges)`,
      duration_ms: elapsed(),
      response_body,
      retryable: true,
    };
  } catch (err) {
    return { http_status: null, error: describeFailure(err, timeoutMs), duration_ms: elapsed(), response_body: "", retryable: true, code: failureCode(err) };
  }
}

/** The first characters of the answer; a body that stalls after a 2xx still counts as delivered. */
async function readStart(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < RESPONSE_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // keep what arrived before the timeout or reset
  } finally {
    reader.cancel().catch(() => undefined);
  }
  return text.slice(0, RESPONSE_CHARS);
}

function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === "TimeoutError" || e.name === "AbortError") return `no answer within ${timeoutMs / 1000} s (timed out)`;
  return `could not deliver: ${e.cause?.message ?? e.cause?.code ?? e.message ?? String(err)}`;
}

/** "timeout", or the system code under fetch's "fetch failed" (ECONNREFUSED, ENOTFOUND, …; BAD_PORT: a port fetch never calls), if any. */
function failureCode(err: unknown): string | undefined {
  const e = err as { name?: string; cause?: { code?: unknown; message?: unknown } };
  if (e.name === "TimeoutError" || e.name === "AbortError") return "timeout";
  if (typeof e.cause?.code === "string") return e.cause.code;
  return e.cause?.message === "bad port" ? "BAD_PORT" : undefined;
}

// A receiver check, start to end: accept the input (input.ts) → the payment (check-payment.ts) → each
// probe (probes.ts) in order, one request at a time, to the given URL only → judge the answers.
// Every request is a notification recorded in the outbox like any other (marked with the check's
// id, with its attempt), but finished at once: a check never retries, so it stops by itself.
// A receiver that cannot be reached stops the run at once, one that does not answer after two
// timeouts in a row: said once in `stopped`, not as a failure per probe.
import type { Deps } from "../deps/deps.js";
import { realTimeOf } from "../domain/clock.js";
import { unitDeps, type Store } from "../store/store.js";
import { timing } from "../config/timings.js";
import { attemptBody, buildNotification, signedBody } from "../notify/outbox.js";
import type { AttemptOutcome, Notification, NotificationAttempt, NotificationBody } from "../domain/types.js";
import { checkEvents } from "./check-events.js";
import { accept, type CheckInput } from "./input.js";
import { createPayment } from "./check-payment.js";
import { PROBES, type AnswerClass, type Probe, type ProbeContext, type Send, type Verdict } from "./probes.js";

export interface SendResult {
  notification_id: string;
  event: string;
  /** X-Sandbox-Attempt: 2 for the duplicate */
  attempt: number;
  /** null: no answer (see error) */
  http_status: number | null;
  duration_ms: number;
  /** empty after a 2xx; what went wrong otherwise, as the notifications log says it */
  error: string;
  /** the start of the receiver's answer */
  response_body: string;
  verdict: Verdict;
}

export interface ProbeResult {
  probe: string;
  sent: string;
  expects: string;
  /** the published expectation the probe stands for */
  why: string;
  sends: SendResult[];
  /** the worst of its sends' */
  verdict: Verdict;
  /** why this verdict: the answer, and what a wrong one means */
  reason: string;
}

export interface ReceiverCheckReport {
  /** the id every notification of the check carries (GET /__sandbox/notifications?check=) */
  check: string;
  url: string;
  merchant_id: string;
  transaction_id: string;
  /** created: made for the check by a direct authorise; given: the transaction_id asked for */
  payment: "created" | "given";
  started_at: string;
  duration_ms: number;
  probes: ProbeResult[];
  /** why the run ended before its last probe ("receiver unreachable: ECONNREFUSED"), or "" */
  stopped: string;
  /** the probes the run did not get to */
  not_run: string[];
  summary: { pass: number; warning: number; fail: number; not_run: number };
  /** no probe failed and the run was not stopped */
  passed: boolean;
}

/** Failures before any answer could come: the next probe would meet the same. */
const UNREACHABLE = new Set([
  "BAD_PORT",
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);
/** timed-out requests in a row that end the run */
const SILENT_LIMIT = 2;
const RANK: Record<Verdict, number> = { pass: 0, warning: 1, fail: 2 };

/** What an answer of each kind means when the probe has nothing more precise to say. */
const GENERIC_RISK: Record<AnswerClass, string> = {
  "2xx": "it was acknowledged",
  "3xx": "a redirect neither acknowledges nor refuses (Sandgate does not follow it, and retries)",
  "4xx": "it was refused",
  "5xx": "the receiver failed on it (Sandgate retries a 5xx)",
  none: "Sandgate counts an attempt without an answer as failed and retries it",
};

function answerClass(status: number | null): AnswerClass {
  if (status === null) return "none";
  if (status < 300) return "2xx";
  if (status < 400) return "3xx";
  return status < 500 ? "4xx" : "5xx";
}

/** A probe's verdict on one answer of the receiver (the check's report and the dashboard judge alike). */
export const verdictOn = (probe: Probe, httpStatus: number | null): Verdict => probe.rule[answerClass(httpStatus)];

/** A check's notification is never retried: its state says how its attempts went, and nothing is due. */
function finish(n: Notification): void {
  const failed = n.attempts.filter((a) => a.error !== "");
  n.state = failed.length ? "failed" : "delivered";
  n.error = failed.at(-1)?.error ?? "";
  n.due_at = "";
  n.deliveries_left = 0;
  n.failures = failed.length;
}

/** The probe's notification: built as Sandgate's own, then shaped as the probe says. */
function shapedNotification(n: Notification, send: Extract<Send, { event: unknown }>, keys: { key: string; other: string }): void {
  const shape = send.shape;
  if (!shape) return;
  const { encryption_data: _genuine, ...unsigned } = n.payload;
  const signed = signedBody(shape.unsigned?.(unsigned) ?? unsigned, shape.otherKey ? keys.other : keys.key);
  const sent = shape.tamper?.(signed) ?? signed;
  // the payload is what was sent while it still has a notification's shape; otherwise the
  // notification it was made from, and `raw` what was sent instead
  const stillShaped = typeof sent.encryption_data === "string";
  if (stillShaped) n.payload = sent as unknown as NotificationBody;
  else n.payload = signed;
  const json = JSON.stringify(sent);
  if (shape.raw) n.raw = shape.raw(json);
  else if (!stillShaped) n.raw = { content_type: "application/json", body: json };
}

function judge(probe: Probe, sends: SendResult[]): Pick<ProbeResult, "verdict" | "reason"> {
  const worst = sends.reduce<SendResult | undefined>((w, s) => (!w || RANK[s.verdict] > RANK[w.verdict] ? s : w), undefined);
  if (!worst) return { verdict: "fail", reason: "nothing to send (the probe it repeats did not run)" };
  if (worst.verdict === "pass") return { verdict: "pass", reason: `as expected: ${probe.expects}` };
  const kind = answerClass(worst.http_status);
  const which = sends.length > 1 ? `${worst.event}: ` : "";
  return { verdict: worst.verdict, reason: `${which}expected ${probe.expects}; ${probe.risk[kind] ?? GENERIC_RISK[kind]}` };
}

/**
 * Runs a check against `input.url`. `sandgateUrl` is how this Sandgate is reached (its payment is
 * made there, and a receiver URL at it is refused). Throws CheckRefused for input it cannot check,
 * before changing anything.
 */
export async function runReceiverCheck(deps: Deps, input: CheckInput, sandgateUrl: string): Promise<ReceiverCheckReport> {
  const { clock, log } = deps;
  /** a unit of the merchant checked: the check's records are that merchant's, handed to `work` */
  const inUnit = <T>(work: (store: Store) => T | Promise<T>) => deps.store.unit(work, { merchant: input.merchant_id });
  const base = new URL(sandgateUrl);
  const accepted = await inUnit((store) => accept(unitDeps(deps, store), input, Number(base.port || (base.protocol === "https:" ? 443 : 80))));
  const started = Date.now();
  const startedAt = clock.now().toISOString();
  const check = await inUnit(async (store) => {
    const id = store.ids.hex("check", 16, "chk_");
    await store.commit();
    return id;
  });
  const tx = accepted.transaction ?? (await createPayment(deps, accepted.merchant, sandgateUrl.replace(/\/+$/, ""), check));
  const key = input.key ?? accepted.merchant.secret_key;
  // another key of the same form: only the signature tells them apart
  const keys = { key, other: `${key.slice(0, -1)}${key.endsWith("x") ? "y" : "x"}_other` };
  const events = await inUnit((store) => checkEvents(tx, store.records, clock.now(), input.url));
  const sent = new Map<string, Notification[]>();
  const ctx: ProbeContext = { events, sent };
  const probes: ProbeResult[] = [];
  const notRun: string[] = [];
  let stopped = "";
  let silent = 0;

  /** Sends one request of a probe and records it; the notification is stored from its first attempt on. */
  async function deliver(probe: Probe, send: Send): Promise<{ n: Notification; outcome: AttemptOutcome; attempt: NotificationAttempt }> {
    const n =
      "again" in send
        ? send.again
        : await inUnit(async (store) => {
            const built = buildNotification(store.ids, clock.now(), send.event, keys.key);
            // sent as one attempt of Sandgate's is: with its sent_at (a probe may change it, signed or not)
            built.payload = attemptBody(built.payload, realTimeOf(clock, clock.now()).toISOString(), keys.key);
            shapedNotification(built, send, keys);
            built.check = check;
            built.probe = probe.id;
            await store.commit(); // the ids it took
            return built;
          });
    const number = n.attempts.length + 1;
    const at = clock.now().toISOString();
    // on a shared Sandgate, to a laptop's receiver through the merchant's `sandgate listen`
    const outcome = await deps.notifier.sendOnce(n, number);
    const { http_status, error, duration_ms, response_body, via } = outcome;
    const attempt: NotificationAttempt = {
      attempt: number,
      at,
      reason: "again" in send ? "duplicate" : "first",
      http_status,
      error,
      duration_ms,
      response_body,
      ...(via ? { via } : {}),
    };
    await inUnit((store) => {
      const held = store.records.notification(n.notification_id) ?? n;
      held.attempts.push(attempt);
      finish(held);
      if (held === n && number === 1) store.records.addNotification(held);
      else store.records.changed("notifications", held);
      return store.commit();
    });
    return { n, outcome, attempt };
  }

  for (const probe of PROBES) {
    if (stopped) {
      notRun.push(probe.id);
      continue;
    }
    const results: SendResult[] = [];
    for (const send of probe.sends(ctx)) {
      const { n, outcome, attempt } = await deliver(probe, send);
      if (outcome.code && UNREACHABLE.has(outcome.code)) {
        stopped = `receiver unreachable: ${outcome.code}${probes.length ? ` (from probe ${probe.id} on)` : ""}`;
        break;
      }
      silent = outcome.code === "timeout" ? silent + 1 : 0;
      sent.set(probe.id, [...(sent.get(probe.id) ?? []), n]);
      const { http_status, error, duration_ms, response_body } = attempt;
      results.push({
        notification_id: n.notification_id,
        event: n.event,
        attempt: attempt.attempt,
        http_status,
        error,
        duration_ms,
        response_body,
        verdict: verdictOn(probe, http_status),
      });
      if (silent >= SILENT_LIMIT) {
        stopped = `receiver does not answer: ${SILENT_LIMIT} requests in a row got no answer within ${timing("notifyTimeoutMs") / 1000} s`;
        break;
      }
    }
    if (stopped.startsWith("receiver unreachable")) {
      notRun.push(probe.id);
      continue;
    }
    const result: ProbeResult = { probe: probe.id, sent: probe.sent, expects: probe.expects, why: probe.why, sends: results, ...judge(probe, results) };
    probes.push(result);
    log.info({ check, probe: probe.id, verdict: result.verdict }, `receiver check ${check} ${probe.id}: ${result.verdict}`);
  }

  const count = (v: Verdict) => probes.filter((p) => p.verdict === v).length;
  const summary = { pass: count("pass"), warning: count("warning"), fail: count("fail"), not_run: notRun.length };
  return {
    check,
    url: input.url,
    merchant_id: accepted.merchant.merchant_id,
    transaction_id: tx.transaction_id,
    payment: accepted.transaction ? "given" : "created",
    started_at: startedAt,
    duration_ms: Date.now() - started,
    probes,
    stopped,
    not_run: notRun,
    summary,
    passed: summary.fail === 0 && !stopped,
  };
}

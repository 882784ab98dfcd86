// What an operator does to a clock, as to a Stripe test clock: read it, move it on, set it to a later
// moment, freeze it and let it run again; the sandbox's (every merchant's time) or one merchant's
// (its records, requests and notifications only). The JSON API and the dashboard's forms both call
// these. A clock only moves forward: a move back is refused and changes nothing.
import type { Deps } from "../deps/deps.js";
import { moveClock, realTimeOf, RUNNING, timeOn, type ClockMove, type ClockSetting } from "../domain/clock.js";
import { applyDue } from "../schedule/scheduler.js";
import { clockBody, clockSetBody, clockWhoseBody } from "../api/operator-bodies.js";
import { parseDuration } from "./duration.js";
import { durationText } from "../base/words.js";
import { problem, type Done } from "./actions.js";

/** One move carries the clock at most ten years: every deduction, refund and payout due in between is made, in order. */
const MAX_MOVE_MS = 3660 * 86_400_000;

export interface ClockReading {
  now: string;
  /** how far the clock reads ahead of real time */
  offset_ms: number;
  /** it stands still (frozen itself, or a merchant's over the frozen sandbox clock) */
  frozen: boolean;
  /** the merchant whose clock it is (absent: the sandbox's) */
  merchant_id?: string;
}

const unknownMerchant = (id: string) => problem(404, "merchant_not_found", `Sandgate knows no merchant ${id} (a fixture's, or one that made a request)`);

/** The sandbox's clock, or a merchant's (its own setting over the sandbox's time), as the API shows a clock. */
export async function readClock(deps: Deps, merchantId: string | undefined): Promise<Done<ClockReading>> {
  if (merchantId === undefined) return { value: reading(deps, undefined) };
  const own = await deps.store.unit((store) => (store.records.merchant(merchantId) ? store.records.clockOf(merchantId) : undefined), { merchant: merchantId });
  return own ? { value: reading(deps, { merchantId, own }) } : unknownMerchant(merchantId);
}

/** The sandbox's clock and every merchant's of its own (moved, or frozen), read in a unit of every merchant: the dashboard's clock card. */
export function everyClock(deps: Deps): { sandbox: ClockReading; merchants: ClockReading[] } {
  const merchants = deps.store.data.merchants
    .map((m) => ({ merchantId: m.merchant_id, own: deps.store.records.clockOf(m.merchant_id) }))
    .filter((m) => m.own !== RUNNING);
  return { sandbox: reading(deps, undefined), merchants: merchants.map((m) => reading(deps, m)) };
}

function reading(deps: Deps, merchant: { merchantId: string; own: ClockSetting } | undefined): ClockReading {
  const sandboxNow = deps.clock.now();
  const now = merchant ? timeOn(merchant.own, sandboxNow.getTime()) : sandboxNow.getTime();
  const frozen = deps.clock.setting().frozen_at !== undefined || merchant?.own.frozen_at !== undefined;
  return {
    ...(merchant ? { merchant_id: merchant.merchantId } : {}),
    now: new Date(now).toISOString(),
    offset_ms: now - realTimeOf(deps.clock, sandboxNow).getTime(),
    frozen,
  };
}

/**
 * Moves a clock and applies what fell due; with a merchant, that merchant's clock only (its refunds
 * settle, payouts move, subscriptions charge and its new records are dated by it; every other
 * merchant's time stays).
 */
async function move(deps: Deps, change: ClockMove, merchantId: string | undefined): Promise<Done<ClockReading & { applied: number }>> {
  const refused = (backwardsMs: number, at: number) =>
    problem(
      400,
      "clock_backwards",
      `a clock only moves forward: that moment is ${durationText(backwardsMs)} before its time (${new Date(at).toISOString()}); nothing changed`,
    );
  const tooFar = problem(400, "invalid_advance", `one move carries a clock at most 3660 days; nothing changed`);
  const onto = (setting: ClockSetting, base: number): Done<ClockSetting> => {
    const next = moveClock(setting, change, base);
    if ("backwards_ms" in next) return refused(next.backwards_ms, timeOn(setting, base));
    return timeOn(next, base) - timeOn(setting, base) > MAX_MOVE_MS ? tooFar : { value: next };
  };
  if (merchantId === undefined) {
    const real = realTimeOf(deps.clock, deps.clock.now()).getTime();
    const next = onto(deps.clock.setting(), real);
    if ("problem" in next) return next;
    deps.clock.adopt(next.value);
    await deps.store.commit(); // the clock itself (with a shared store, every replica's)
    const applied = await applyDue(deps);
    return { value: { ...reading(deps, undefined), applied } };
  }
  const moved = await deps.store.unit(
    async (store): Promise<Done<ClockSetting> | undefined> => {
      if (!store.records.merchant(merchantId)) return undefined;
      // the merchant's own clock: its record carries its setting, in its own unit
      const next = onto(store.records.clockOf(merchantId), deps.clock.now().getTime());
      if ("value" in next) {
        store.records.setMerchantClock(merchantId, next.value);
        await store.commit();
      }
      return next;
    },
    { merchant: merchantId },
  );
  if (!moved) return unknownMerchant(merchantId);
  if ("problem" in moved) return moved;
  const applied = await applyDue(deps);
  return { value: { ...reading(deps, { merchantId, own: moved.value }), applied } };
}

/** `{advance: "90s"}` or `{advance_seconds: 90}`, and `merchant_id` for one merchant's clock. */
export function advanceClock(deps: Deps, raw: unknown): Promise<Done<ClockReading & { applied: number }>> {
  const body = clockBody.safeParse(raw ?? {}).data;
  const ms = !body
    ? undefined
    : body.advance_seconds !== undefined && body.advance_seconds !== ""
      ? Number(body.advance_seconds) * 1000
      : parseDuration(body.advance);
  if (ms === undefined || !Number.isFinite(ms) || ms < 0 || ms > MAX_MOVE_MS) {
    return Promise.resolve(
      problem(
        400,
        "invalid_advance",
        'send {"advance":"90s"} (s, m, h, d, w) or {"advance_seconds":90}; the clock only moves forward, at most 3660 days per call',
      ),
    );
  }
  return move(deps, { advance: ms }, body!.merchant_id);
}

/** `{to: "2027-01-01T00:00:00Z"}`: the clock set to a later moment (a frozen clock stays frozen there). */
export function setClock(deps: Deps, raw: unknown): Promise<Done<ClockReading & { applied: number }>> {
  const body = clockSetBody.safeParse(raw ?? {}).data;
  const to = body ? Date.parse(body.to) : NaN;
  if (!body || !Number.isFinite(to)) {
    return Promise.resolve(
      problem(400, "invalid_time", 'send {"to":"2027-01-01T00:00:00Z"}: a moment in ISO 8601 with its zone (Z or ±hh:mm); nothing changed'),
    );
  }
  return move(deps, { to }, body.merchant_id);
}

/** `{}` or `{merchant_id}`: time stands still for that clock until it is unfrozen (an advance or a set still moves it). */
export const freezeClock = (deps: Deps, raw: unknown) => whose(deps, raw, { freeze: true });

/** `{}` or `{merchant_id}`: a frozen clock runs on from where it stood. */
export const unfreezeClock = (deps: Deps, raw: unknown) => whose(deps, raw, { unfreeze: true });

function whose(deps: Deps, raw: unknown, change: ClockMove): Promise<Done<ClockReading & { applied: number }>> {
  const body = clockWhoseBody.safeParse(raw ?? {}).data;
  if (!body)
    return Promise.resolve(
      problem(400, "invalid_merchant", 'merchant_id must be a merchant\'s id: send {} for the sandbox\'s clock or {"merchant_id":"M"} for one merchant\'s'),
    );
  return move(deps, change, body.merchant_id);
}

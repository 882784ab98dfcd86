// The sandbox clock: real time plus an offset the operator moves forward, or frozen at a moment.
// A merchant's own clock is the same setting over the sandbox's time (kept on its record).
// Domain code receives `now` from here, never from Date.now(). Its date formats: domain/dates.ts;
// the work that falls due by it: domain/due-queue.ts.

/** A clock's setting: it reads `base + offset_ms` (base: real time, or the sandbox's for a merchant), or stands at `frozen_at` */
export interface ClockSetting {
  offset_ms: number;
  /** ms since the epoch: while set, the clock stands still there */
  frozen_at?: number;
}

/** What a tester does to a clock, as Stripe's test clocks: move it on, set it to a later moment, freeze it, let it run again. */
export type ClockMove = { advance: number } | { to: number } | { freeze: true } | { unfreeze: true };

export const RUNNING: ClockSetting = { offset_ms: 0 };

/** a merchant's own clock, from its record (none moved: RUNNING, the sandbox's time) */
export function clockSettingOf(m: { clock_offset_ms?: number; clock_frozen_at_ms?: number } | undefined): ClockSetting {
  if (!m || (!m.clock_offset_ms && m.clock_frozen_at_ms === undefined)) return RUNNING;
  return m.clock_frozen_at_ms === undefined ? { offset_ms: m.clock_offset_ms ?? 0 } : { offset_ms: m.clock_offset_ms ?? 0, frozen_at: m.clock_frozen_at_ms };
}

/** two settings compared: the same key, the same clock */
export const clockKey = (s: ClockSetting): string => `${s.offset_ms}/${s.frozen_at ?? ""}`;

/** the time a clock with this setting reads when its base reads `base` */
export const timeOn = (setting: ClockSetting, base: number): number => setting.frozen_at ?? base + setting.offset_ms;

/**
 * The setting after a move, or how far back it would have gone: a clock only moves forward (a
 * moment earlier than its time is refused). Freezing keeps the time it reads; unfreezing runs on
 * from there.
 */
export function moveClock(setting: ClockSetting, move: ClockMove, base: number): ClockSetting | { backwards_ms: number } {
  const at = timeOn(setting, base);
  const to = "advance" in move ? at + move.advance : "to" in move ? move.to : at;
  if (to < at) return { backwards_ms: at - to };
  if ("freeze" in move) return { offset_ms: setting.offset_ms, frozen_at: at };
  if ("unfreeze" in move || setting.frozen_at === undefined) return { offset_ms: to - base };
  return { offset_ms: setting.offset_ms, frozen_at: to };
}

export interface Clock {
  now(): Date;
  /** how far the clock reads ahead of real time, now (frozen: it shrinks as real time passes) */
  offsetMs(): number;
  setting(): ClockSetting;
  /** puts a setting in force: a restored snapshot's, or another replica's */
  adopt(setting: ClockSetting): void;
  /** moves the clock (forward only): how far back it would have gone when refused, else undefined */
  move(move: ClockMove): { backwards_ms: number } | undefined;
}

/**
 * The real time at the instant the sandbox's clock read `sandboxNow`: what the clocks of the world
 * outside say (a receiver's freshness window), however far the sandbox's clock was moved.
 */
export const realTimeOf = (clock: Pick<Clock, "offsetMs">, sandboxNow: Date): Date => new Date(sandboxNow.getTime() - clock.offsetMs());

export function createClock(realNow: () => number = Date.now): Clock {
  let setting = RUNNING;
  return {
    now: () => new Date(timeOn(setting, realNow())),
    offsetMs() {
      const real = realNow();
      return timeOn(setting, real) - real;
    },
    setting: () => setting,
    adopt(next) {
      setting = next.frozen_at === undefined ? { offset_ms: next.offset_ms } : { offset_ms: next.offset_ms, frozen_at: next.frozen_at };
    },
    move(change) {
      const next = moveClock(setting, change, realNow());
      if ("backwards_ms" in next) return next;
      setting = next;
      return undefined;
    },
  };
}

// The sandbox clock: real time plus an offset the operator moves forward, or frozen at a moment.
// A merchant's own clock is the same setting over the sandbox's time (kept on its record).
// Domain code receives `now` from here, never from Date.now(). Below: the interface document's
// date formats, and the queue of work that falls due by the clock.

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

// The interface document's date formats. Sandgate's clock is UTC; every formatted date is UTC.
const pad = (n: number, w = 2) => String(n).padStart(w, "0");

function parts(d: Date) {
  return {
    y: pad(d.getUTCFullYear(), 4),
    mo: pad(d.getUTCMonth() + 1),
    da: pad(d.getUTCDate()),
    h: pad(d.getUTCHours()),
    mi: pad(d.getUTCMinutes()),
    s: pad(d.getUTCSeconds()),
  };
}

let lastTime = Number.NaN;
let lastIso = "";
/**
 * date.toISOString(), computed once for the same instant in a row: a request's steps share its
 * `now` (a 50-order capture stamps 100 times with it), and they share one string.
 */
export function isoOf(date: Date): string {
  const time = date.getTime();
  if (time !== lastTime) {
    lastTime = time;
    lastIso = date.toISOString();
  }
  return lastIso;
}

/** YYYYMMDDhhmmss (query transaction_date, refund dates) */
export function compactDate(iso: string): string {
  if (!iso) return "";
  const p = parts(new Date(iso));
  return `${p.y}${p.mo}${p.da}${p.h}${p.mi}${p.s}`;
}

/** YYYY-MM-DD HH:MM:SS (recurring_deduction_time) */
export function spacedDate(iso: string): string {
  if (!iso) return "";
  const p = parts(new Date(iso));
  return `${p.y}-${p.mo}-${p.da} ${p.h}:${p.mi}:${p.s}`;
}

/** Parses YYYYMMDDhhmmss (selection bounds); undefined when it is not one. */
export function parseCompactDate(text: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(text);
  if (!m) return undefined;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
  return Number.isNaN(d.getTime()) || compactDate(d.toISOString()) !== text ? undefined : d;
}

export type Interval = "day" | "week" | "month" | "year";

/** The date `count` intervals after `from` (months clamp to the month's last day). */
export function addInterval(from: Date, interval: Interval, count: number): Date {
  const d = new Date(from.getTime());
  if (interval === "day") d.setUTCDate(d.getUTCDate() + count);
  else if (interval === "week") d.setUTCDate(d.getUTCDate() + 7 * count);
  else {
    const months = interval === "month" ? count : 12 * count;
    const day = d.getUTCDate();
    d.setUTCDate(1);
    d.setUTCMonth(d.getUTCMonth() + months);
    const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
    d.setUTCDate(Math.min(day, last));
  }
  return d;
}

// Work that falls due at a time (a refund settling, a payout moving on, a subscription charging):
// a binary min-heap on the due time, so "what is due by now?" costs O(1) when nothing is and
// O(log n) per item that is, whatever the number of records. Entries are checked when they come
// out (`stillDue`): a record settled early by the operator, or rescheduled, is simply skipped.
export class DueQueue<T> {
  private heap: { at: number; item: T }[] = [];

  constructor(private readonly stillDue: (item: T, at: number) => boolean) {}

  get size(): number {
    return this.heap.length;
  }

  /** Schedules `item` at `at` (ms since the epoch); NaN (no due time) schedules nothing. */
  push(item: T, at: number): void {
    if (!Number.isFinite(at)) return;
    const heap = this.heap;
    heap.push({ at, item });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.at <= heap[i]!.at) break;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }

  /** The next item due by `now` (earliest first), or undefined; stale entries are dropped on the way. */
  popDue(now: number): T | undefined {
    while (this.heap.length && this.heap[0]!.at <= now) {
      const { at, item } = this.pop();
      if (this.stillDue(item, at)) return item;
    }
    return undefined;
  }

  /** Whether the earliest entry is due by `now` (it may be stale: popDue then finds nothing). */
  dueBy(now: number): boolean {
    return this.heap.length > 0 && this.heap[0]!.at <= now;
  }

  /** When the earliest item still due falls due (stale entries are dropped on the way), or undefined. */
  nextAt(): number | undefined {
    while (this.heap.length && !this.stillDue(this.heap[0]!.item, this.heap[0]!.at)) this.pop();
    return this.heap[0]?.at;
  }

  private pop(): { at: number; item: T } {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let least = i;
        if (l < heap.length && heap[l]!.at < heap[least]!.at) least = l;
        if (r < heap.length && heap[r]!.at < heap[least]!.at) least = r;
        if (least === i) break;
        [heap[least], heap[i]] = [heap[i]!, heap[least]!];
        i = least;
      }
    }
    return top;
  }
}

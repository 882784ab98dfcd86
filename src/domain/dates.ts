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

// The waits Sandgate keeps by the world's clock: how long a notification's receiver is given, how
// long a dropped listener is waited for, how often a stream says it is alive, how long a replica's
// turn outlives it. Their defaults are the product's. SANDGATE_TIMINGS (a JSON object, e.g.
// {"listenGraceMs":200}) overrides any of them: a test of "forgotten after its grace period" then
// waits milliseconds, not the production seconds (docs/settings.md). Each is read where it is used,
// so a test may set it before the sandbox it starts.

export const TIMING_DEFAULTS = {
  /** one notification attempt: connection and answer (dispatcher) */
  notifyTimeoutMs: 5_000,
  /** with a shared store, a replica's claim on an attempt outlives notifyTimeoutMs by this much before another replica may take it over */
  notifyClaimSlackMs: 5_000,
  /** an attempt handed to `sandgate listen` waits this much longer than notifyTimeoutMs for the listener's report */
  listenSlackMs: 10_000,
  /** a listener whose connection dropped keeps its merchant's notifications this long, waiting for it to come back */
  listenGraceMs: 10_000,
  /** a listen stream says ": still here" this often, so proxies and the listener know it is alive */
  listenHeartbeatMs: 15_000,
  /** how long a merchant's turn on a shared store survives a replica that stopped answering (each commit renews it) */
  leaseMs: 2_000,
};

export type TimingName = keyof typeof TIMING_DEFAULTS;

let readFrom: string | undefined;
let overrides: Partial<Record<TimingName, number>> = {};

/** What SANDGATE_TIMINGS sets: only known names with a positive number (anything else is a mistake worth saying). */
function parseTimings(raw: string): Partial<Record<TimingName, number>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(`SANDGATE_TIMINGS is not JSON: ${raw.slice(0, 80)}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error("SANDGATE_TIMINGS must be a JSON object of names and milliseconds");
  const out: Partial<Record<TimingName, number>> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (!(name in TIMING_DEFAULTS)) throw new Error(`SANDGATE_TIMINGS: unknown timing ${name} (known: ${Object.keys(TIMING_DEFAULTS).join(", ")})`);
    if (typeof value !== "number" || !(value > 0)) throw new Error(`SANDGATE_TIMINGS: ${name} must be a number of milliseconds above 0`);
    out[name as TimingName] = value;
  }
  return out;
}

/** A timing in force: SANDGATE_TIMINGS's value, else the default. */
export function timing(name: TimingName): number {
  const raw = process.env.SANDGATE_TIMINGS ?? "";
  if (raw !== readFrom) {
    overrides = raw ? parseTimings(raw) : {};
    readFrom = raw;
  }
  return overrides[name] ?? TIMING_DEFAULTS[name];
}

/** Reads SANDGATE_TIMINGS now: throws its mistake, if any. */
export function checkTimings(): void {
  timing("notifyTimeoutMs");
}

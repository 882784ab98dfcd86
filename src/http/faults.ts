// What a scenario can do to the transport of an answer: wait, hang, reset the connection, cut the
// body short, or send nothing. Decided with the answer (the body cut here), done by whoever sends it
// (gateway-server.ts waits, hangs or resets).
import type { Then } from "../scenarios/schema.js";

export interface Rendered {
  status: number;
  contentType: string;
  body: string;
}

/** A fault or a 5xx status stands in for the gateway failing: unless `process`, the request has no effect. */
export function skipsProcessing(then: Then): boolean {
  const failing = then.fault !== undefined || (then.status !== undefined && then.status >= 500);
  return failing && then.process !== true;
}

/** Milliseconds to wait: fixed, or within {min, max} picked by `pick` (seeded by the caller). */
export function latencyMs(then: Then, pick: (min: number, max: number) => number): number {
  const l = then.latency;
  if (l === undefined) return 0;
  return typeof l === "number" ? l : pick(l.min, l.max);
}

/** The body a fault leaves: none (empty), the first half (malformed), or all of it. */
export function faultedBody(body: string, fault: Then["fault"]): string {
  if (fault === "empty") return "";
  if (fault === "malformed") return body.slice(0, Math.max(1, Math.floor(body.length / 2)));
  return body;
}

// What a scenario can do to the transport of an answer: wait, hang, reset the connection, cut the
// body short, or send nothing. Applied after the answer is rendered (and signed).
import type { ServerResponse } from "node:http";
import { GATEWAY_PAGE_CSP } from "../render/checkout-page.js";
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export async function deliver(res: ServerResponse, rendered: Rendered, then: Then, waitMs: number): Promise<void> {
  if (waitMs > 0) await sleep(waitMs);
  if (res.req.socket.destroyed) return;
  switch (then.fault) {
    case "hang":
      return; // never answered: the client times out; the server ends the socket when it closes
    case "reset":
      res.req.socket.destroy();
      return;
    case "empty":
      send(res, rendered, "");
      return;
    case "malformed":
      send(res, rendered, rendered.body.slice(0, Math.max(1, Math.floor(rendered.body.length / 2))));
      return;
    default:
      send(res, rendered, rendered.body);
  }
}

/**
 * Straight to Node's response: the content type is already complete and there is no ETag or
 * freshness to work out, so Express's send() would only add work (and turn a long body into a
 * Buffer written apart from the headers).
 */
function send(res: ServerResponse, rendered: Rendered, body: string): void {
  const headers = { "Content-Type": rendered.contentType, "Content-Length": Buffer.byteLength(body) };
  // an HTML answer (the checkout's loading page, an HTML refusal) runs in the payer's browser: its policy allows only its own style and script
  res.writeHead(rendered.status, rendered.contentType.startsWith("text/html") ? { ...headers, ...HTML_HEADERS } : headers);
  res.end(body);
}

const HTML_HEADERS = { "Content-Security-Policy": GATEWAY_PAGE_CSP, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" };

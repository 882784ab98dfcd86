// The gateway's core, on plain data: runOperation(operation, input) → answer, where the input is
// the request as data (target, headers, body bytes, client address) and the answer is what to send
// (status, headers, body, and what a scenario does to the transport). No node:http or Express here:
// gateway-server.ts reads a request off the socket into an input and writes the answer back; the
// playground calls the core directly. The path every gateway request takes, in one place:
//   parse body → identify caller → check signature (strict: its fields first) → catch up with time → decide →
//   operation.handle (validate → change state) → commit → render with encryption_data → log.
// A GatewayError thrown anywhere is rendered in the operation's format; nothing else reaches the client.
import type { z } from "zod";
import { GatewayError } from "../domain/codes.js";
import type { Deps } from "../deps/deps.js";
import { renderXml, type XmlNode, type XmlValue } from "../base/markup.js";
import { checkRequestSignature, refuseMismatch, requestFields, signResponse, type SignatureCheck } from "../domain/signature.js";
import { findCaller, secretKeyOf, type Caller } from "../domain/merchants.js";
import type { SignedOperation, Format } from "../domain/gateway-operations.js";
import type { BatchSignature } from "../config/config.js";
import { StoreRefusal, StoreUnavailable, unitDeps } from "../store/store.js";
import { catchUp } from "../schedule/scheduler.js";
import { faultedBody, latencyMs, skipsProcessing, type Decision } from "../scenarios/registry.js";
import type { Then } from "../scenarios/schema.js";
import { ID_MAX, ID_MESSAGE } from "./fields.js";
import { decodeUtf8, parseText, type Body } from "./body.js";
import { text } from "../domain/field-text.js";
import { maskRequest } from "../domain/masking.js";
import { refuse } from "./refusal.js";
import { normaliseIp, ORDERS_LOGGED, type Exchange } from "../store/request-log.js";
import type { Reply } from "./reply.js";
import type { RequestSource } from "../domain/types.js";

export type { Reply } from "./reply.js";

export interface OperationRequest {
  /** the request log's id of this request (X-Request-Id) */
  requestId: string;
  body: Body;
  caller: Caller;
  signature: SignatureCheck;
  /** absolute address of this server as the caller sees it, for issuer_url and page links */
  baseUrl: string;
  now: Date;
  /** the decision for this request (X-Sandbox-Outcome > X-Sandbox-Scenario > merchant binding > global scenario) */
  decision: Decision;
  /** a decision for part of the request (a batch order, say) under the same choice (every order gets X-Sandbox-Outcome's) */
  decide(operation: string, fields: Record<string, unknown>, orderNo: string, fallback: string): Decision;
  /** who sent it, for the histories it writes */
  via: RequestSource;
}

/** What scenario rules see of a request: by default the operation's name, the body, its order_no. */
interface ScenarioView {
  operation: string;
  fields: Record<string, unknown>;
  /** the outcome when no rule names one */
  fallback: string;
}

export interface Operation {
  name: SignedOperation;
  path: string;
  format: Format;
  /** query operations are usable only from the merchant's registered IP addresses */
  registeredIpOnly?: boolean;
  /**
   * The body's schema: the zod schema the operation validates with (its envelope fields added), from
   * which GET /__sandbox/openapi.json is generated.
   */
  request: z.ZodType;
  /** a batch operation's order array (capture_orders, ...) and the names of each result's status and message */
  orders?: { arrayField: string; statusField: string; messageField: string };
  /** JSON fields a refusal still carries, e.g. { capture_orders: [] }, so the answer keeps its shape */
  emptyResult?: Record<string, unknown>;
  /**
   * The checks handle starts with, on the body alone (missing and malformed fields; no record looked
   * up): in strict mode they run before the signature's, so a request hears first of the field to fix.
   * Throws the GatewayError handle would.
   */
  checkFields(body: Body, deps: Deps): unknown;
  /** what the scenario rules match for the whole request; authorise adds the token's card, say */
  scenarioView?(body: Body, caller: Caller, deps: Deps): ScenarioView;
  handle(request: OperationRequest, deps: Deps): Reply | Promise<Reply>;
}

/**
 * A gateway request as plain data: what the node:http adapter (gateway-server.ts) reads off the
 * socket, or what the playground builds. Header names are lower case, each with its first value.
 */
export interface GatewayInput {
  /** the request target as sent, e.g. /v1/authorise (the request log's URL) */
  url: string;
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** the headers as sent, name and value in turn (the request log shows some of them) */
  rawHeaders: readonly string[];
  /** the body's bytes, decoded of any Content-Encoding; or why they could not be read (too large, say) */
  body: Uint8Array | GatewayError;
  clientAddress: string;
  /** performance.now() when the request arrived (the request log's duration) */
  started?: number;
  /** who sends it (default: a merchant's server): the dashboard's portal and playground say so in what it changes */
  via?: RequestSource;
}

/** The answer as plain data: what to send, and what the scenario does to its transport. */
export interface GatewayAnswer {
  status: number;
  /** X-Request-Id, X-Sandbox-Signature, X-Sandbox-Rule and Content-Type */
  headers: Record<string, string>;
  body: string;
  /** wait this long before sending (a scenario's latency) */
  waitMs: number;
  /** hang: never answer; reset: close the connection; empty/malformed: the body is already cut (see faultedBody in scenarios/registry.ts) */
  fault?: Then["fault"];
}

/**
 * One gateway request, start to end: parse the body → identify the caller → check the signature →
 * catch up with time (schedule/scheduler.ts) → decide → operation.handle → commit → render and sign → log.
 * A GatewayError thrown anywhere is answered in the operation's format; nothing else escapes.
 */
export async function runOperation(op: Operation, input: GatewayInput, deps: Deps): Promise<GatewayAnswer> {
  const started = input.started ?? performance.now();
  const requestId = deps.requests.nextId();
  let body: Body = {};
  // the body's text for the request log: only a body that was read (decoded and parsed) is kept
  let sent = "";
  const seen: Seen = { signature: null, then: {} };
  let reply: Reply;
  try {
    if (input.body instanceof GatewayError) throw input.body;
    ({ body, text: sent } = parseBody(input.body, header1(input, "content-type") ?? ""));
    // the signature is checked over what the merchant sent
    seen.asSent = body;
    // a card number typed into any other field (a name, an address, a note) is never stored; the
    // request log keeps the body with every card number and security code masked, whatever their shape
    ({ body, text: sent } = maskRequest(body, sent));
    // validate → decide → change state → commit: one unit of work (atomic across replicas with a shared store)
    // the merchant's unit: its records only (a request without one is refused before it reads any)
    const merchant = text(body.merchant_id);
    // (run again from the start if the merchant's turn was lost before its changes were written: nothing outside the store happened yet)
    reply = await deps.store.unit(
      (store) => decideAndHandle(op, unitDeps(deps, store), input, requestId, body, seen),
      merchant ? { merchant, again: true } : { none: true },
    );
  } catch (err) {
    const known = err instanceof GatewayError || err instanceof StoreUnavailable;
    if (!known) deps.log.error({ err, requestId, path: op.path }, "unexpected error");
    const detail = !known ? "see the server log" : err instanceof StoreRefusal ? err.message : undefined;
    const refusal = err instanceof GatewayError ? err : new GatewayError(known ? "store_unavailable" : "internal_error", detail);
    reply = refuse(op.format, refusal, body, op.emptyResult);
  }
  const { caller, signature, then } = seen;
  const key = caller?.merchant.secret_key ?? secretKeyOf(deps.store.records, text(body.merchant_id));
  const headers: Record<string, string> = { "X-Request-Id": requestId };
  if (signature) headers["X-Sandbox-Signature"] = signature.matched ? "matched" : "mismatch";
  if (reply.rule) headers["X-Sandbox-Rule"] = reply.rule;
  // in strict mode only a caller who proved the key gets a signed answer: a refusal signed for anyone
  // would be an oracle (a refusal's merchant_id, account_id and return_status "0", signed, is the
  // request signature of an account whose id ends in "0")
  const signs = deps.config.signatureMode !== "strict" || signature?.matched === true;
  const rendered = render(op, reply, signs ? key : null);
  record(deps, op, input, requestId, body, reply, signature, exchangeOf(input, headers, sent, rendered, started));
  headers["Content-Type"] = rendered.contentType;
  const waitMs = latencyMs(then, (min, max) => deps.store.ids.intFor(`latency|${requestId}`, min, max));
  return { status: rendered.status, headers, body: faultedBody(rendered.body, then.fault), waitMs, ...(then.fault ? { fault: then.fault } : {}) };
}

/** The body's bytes as text (UTF-8) and as a plain object. */
function parseBody(bytes: Uint8Array, contentType: string): { body: Body; text: string } {
  const text = decodeUtf8(bytes);
  return { body: parseText(text, contentType), text };
}

/** The request target's path, lower-cased and without one trailing slash: the key of an operation. */
export function routePath(url: string): string {
  let path: string;
  if (url.startsWith("/")) {
    const query = url.indexOf("?");
    path = query < 0 ? url : url.slice(0, query);
  } else {
    // absolute form (through a proxy): http://host/v1/authorise
    try {
      path = new URL(url).pathname;
    } catch {
      return "";
    }
  }
  if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
  return path.toLowerCase();
}

/** What the answer needs to know of a request even when it was refused half-way. */
interface Seen {
  /** the body as parsed, before card numbers outside the card fields were masked */
  asSent?: Body;
  caller?: Caller;
  signature: SignatureCheck | null;
  then: Then;
}

/** Identify the caller → check the signature → decide → operation.handle → commit. */
async function decideAndHandle(op: Operation, deps: Deps, input: GatewayInput, requestId: string, body: Body, seen: Seen): Promise<Reply> {
  const merchantId = requireId(body, "merchant_id");
  const accountId = requireId(body, "account_id");
  const caller = findCaller(deps.store.records, deps.store.ids, merchantId, accountId, deps.config);
  seen.caller = caller;
  if (op.registeredIpOnly) checkRegisteredIp(caller, input.clientAddress);
  const signature = checkRequestSignature(
    signedFields(op, body, deps.config.batchSignature),
    seen.asSent ?? body,
    caller.merchant.secret_key,
    deps.config.signatureMode,
    body,
  );
  seen.signature = signature;
  if (signature.mode === "strict" && !signature.matched) {
    // the request's own fields first, then its signature: what to fix first is told first
    op.checkFields(body, deps);
    refuseMismatch(signature, requestId);
  }
  const baseUrl = deps.config.baseUrl ?? origin(input);
  // what fell due by the sandbox's clock happens first; the request itself is dated by the merchant's own
  const sandboxNow = deps.clock.now();
  const now = deps.store.records.nowOf(caller.merchant.merchant_id, sandboxNow);
  const caughtUp = deps.store.records.mayBeDue(sandboxNow) ? catchUp(deps.store.records, sandboxNow, deps.store.ids, deps) : 0;

  const header = header1(input, "x-sandbox-scenario");
  const outcome = header1(input, "x-sandbox-outcome");
  const decide = (operation: string, fields: Record<string, unknown>, orderNo: string, fallback: string) =>
    deps.scenarios.decide({ operation, fields, merchantId, header, outcome, orderNo, fallback });
  const view = op.scenarioView?.(body, caller, deps) ?? { operation: op.name, fields: body, fallback: "" };
  // an unknown scenario or outcome is refused here, before the operation changes anything
  const decision = decide(view.operation, view.fields, text(body.order_no), view.fallback);
  const then = decision.then;
  seen.then = then;
  const reply: Reply = skipsProcessing(then)
    ? { ...refuse(op.format, new GatewayError("scenario_fault", `rule ${decision.rule}`), body, op.emptyResult), status: then.status ?? 503 }
    : await op.handle({ requestId, body, caller, signature, baseUrl, now, decision, decide, via: input.via ?? "api" }, deps);
  reply.rule ??= decision.rule;
  if (then.status !== undefined) reply.status = then.status;
  // a merchant or account first used by this request is kept when the request was accepted (or
  // changed something of it, as a scenario's 503 that still takes effect): never for a refusal
  if ((reply.changed || (reply.status ?? 200) < 400) && caller.commitProvisioning()) reply.changed = true;
  if (caughtUp > 0) reply.changed = true;
  if (reply.changed) await deps.store.commit(true); // the unit's last change: the turn goes with it
  return reply;
}

/** The fields a request of `op` is signed over (data/signature-fields.json; with --batch-signature orders, a batch's orders too). */
export const signedFields = (op: Operation, body: Body, batchSignature: BatchSignature) => requestFields(op.name, body, batchSignature, op.orders?.arrayField);

/** This server as the client addressed it (Sandgate serves plain HTTP; no proxy is trusted). */
const origin = (input: GatewayInput) => `http://${header1(input, "host") ?? "localhost"}`;

/** A request header's value (the first, if a header Node keeps as a list was sent twice). */
function header1(input: GatewayInput, name: string): string | undefined {
  const value = input.headers[name];
  return typeof value === "string" || value === undefined ? value : value[0];
}

/** merchant_id or account_id: present, text, and no longer than an identifier may be (nothing is looked up or provisioned otherwise). */
function requireId(body: Body, field: string): string {
  const value = body[field];
  if (value === undefined || value === null || value === "")
    throw new GatewayError("missing_field", `${field} is required`, [{ field, message: "is required" }]);
  if (typeof value !== "string" && typeof value !== "number") {
    throw new GatewayError("invalid_field", `${field} must be a string`, [{ field, message: "must be a string" }]);
  }
  const id = String(value);
  if (id.length > ID_MAX) throw new GatewayError("invalid_field", `${field} ${ID_MESSAGE}`, [{ field, message: ID_MESSAGE }]);
  return id;
}

function checkRegisteredIp(caller: Caller, ip: string): void {
  const allowed = caller.merchant.registered_ips;
  if (allowed.includes("*") || allowed.some((a) => normaliseIp(a) === normaliseIp(ip))) return;
  throw new GatewayError(
    "ip_not_registered",
    `${normaliseIp(ip)} is not registered for merchant ${caller.merchant.merchant_id} (registered: ${allowed.join(", ")})`,
  );
}

/** The reply as bytes on the wire: status, content type, body with its encryption_data. */
/** an answer as it is sent: status, type and body */
interface Rendered {
  status: number;
  contentType: string;
  body: string;
}

function render(op: Operation, reply: Reply, key: string | null): Rendered {
  const status = reply.status ?? 200;
  if ("xml" in reply) {
    // the signed fields are top-level texts (later ones win, as in an object built from the list)
    const asObject: Record<string, XmlValue> = {};
    for (const [name, value] of reply.xml) if (!Array.isArray(value)) asObject[name] = value;
    const nodes: XmlNode[] = [...reply.xml, ["encryption_data", key === null ? "" : signResponse(op.name, asObject, key)]];
    return { status, contentType: "application/xml; charset=utf-8", body: renderXml("respon", nodes) };
  }
  if ("json" in reply) {
    reply.json.encryption_data = key === null ? "" : signResponse(op.name, reply.json, key);
    return { status, contentType: "application/json; charset=utf-8", body: JSON.stringify(reply.json) };
  }
  return { status, contentType: "text/html; charset=utf-8", body: reply.html };
}

/** The request's headers a HAR reader wants to see (what shapes the answer), in the order sent. */
const SHOWN_REQUEST_HEADERS = new Set(["content-type", "accept", "user-agent", "x-sandbox-scenario", "x-sandbox-outcome"]);

/** What went over the wire (the request log keeps it for the most recent requests): the body as its text, the rest by reference. */
function exchangeOf(input: GatewayInput, headers: Record<string, string>, body: string, rendered: Rendered, started: number): Exchange {
  const raw = input.rawHeaders;
  const requestHeaders: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (SHOWN_REQUEST_HEADERS.has(raw[i]!.toLowerCase())) requestHeaders.push([raw[i]!, raw[i + 1]!]);
  const responseHeaders: [string, string][] = [];
  for (const name in headers) responseHeaders.push([name.toLowerCase(), headers[name]!]);
  responseHeaders.push(["content-type", rendered.contentType]);
  return {
    method: "POST",
    url: `${origin(input)}${input.url}`,
    requestHeaders,
    requestType: header1(input, "content-type") ?? "",
    body,
    status: rendered.status,
    responseHeaders,
    responseType: rendered.contentType,
    responseBody: rendered.body,
    duration_ms: Math.round((performance.now() - started) * 100) / 100,
  };
}

/** The order a request names: its order_no, or those of a batch's orders (capture_orders, refund_orders, ...). */
function ordersOf(body: Body): { order_no: string; order_nos?: string[] } {
  const own = text(body.order_no);
  if (own) return { order_no: own };
  const named = new Set<string>();
  for (const list of Object.values(body)) {
    if (!Array.isArray(list)) continue;
    for (const order of list) {
      if (named.size === ORDERS_LOGGED) break;
      const orderNo = order && typeof order === "object" ? text((order as Body).order_no) : "";
      if (orderNo) named.add(orderNo);
    }
  }
  const all = [...named];
  return all.length > 1 ? { order_no: all[0]!, order_nos: all } : { order_no: all[0] ?? "" };
}

function record(
  deps: Deps,
  op: Operation,
  input: GatewayInput,
  id: string,
  body: Body,
  reply: Reply,
  signature: SignatureCheck | null,
  exchange: Exchange,
): void {
  const merchantId = text(body.merchant_id);
  const entry = {
    id,
    // dated by the merchant's own clock, as its records are (a request naming no merchant: the sandbox's)
    at: deps.store.records.nowOf(merchantId, deps.clock.now()).toISOString(),
    operation: op.name,
    path: op.path,
    ip: normaliseIp(input.clientAddress),
    merchant_id: merchantId,
    account_id: text(body.account_id),
    ...ordersOf(body),
    http_status: reply.status ?? 200,
    result: reply.result,
    rule: reply.rule ?? "",
    ...(reply.note ? { note: reply.note } : {}),
    signature: signature && {
      mode: signature.mode,
      fields: signature.fields,
      signingString: signature.signingString,
      expected: signature.signature,
      received: signature.received,
      matched: signature.matched,
    },
  };
  deps.requests.add(entry, exchange);
  // no log line is built when the level is off
  if (deps.log.isLevelEnabled("info")) deps.log.info({ request: entry }, `${op.path} ${entry.http_status} ${entry.result}`);
}

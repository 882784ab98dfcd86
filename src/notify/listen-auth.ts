// How `sandgate listen` proves it acts for a merchant without ADMIN_TOKEN and without sending the
// key: three headers on each of its requests, the merchant, the time (unix seconds) and
// sha256(merchant_id + time + method + path + key) in lowercase hex, as the gateway signs its
// requests. The server takes a time within LISTEN_WINDOW_S of its own (a captured header stops
// working), and refuses every failure alike: an unknown merchant, a wrong key and a stale time get the
// same answer, in the same time.
import { timingSafeEqual } from "node:crypto";
import { signatureOf } from "../domain/signature.js";
import { provisionedKey } from "../domain/merchants.js";
import type { Repository } from "../domain/records.js";

export const LISTEN_HEADERS = { merchant: "x-sandgate-merchant", time: "x-sandgate-time", signature: "x-sandgate-signature" } as const;
/** how far a listen request's time may be from the server's, either way */
export const LISTEN_WINDOW_S = 300;
const SIGNED = ["merchant_id", "time", "method", "path"] as const;

/** sha256(merchant_id + time + method + path + key): what X-Sandgate-Signature carries. */
export const listenSignature = (merchant_id: string, time: string, method: string, path: string, key: string): string =>
  signatureOf(SIGNED, { merchant_id, time, method: method.toUpperCase(), path }, key);

/** The headers of a listen request (the path without its query). */
export function listenHeaders(merchant: string, key: string, method: string, path: string, nowMs = Date.now()): Record<string, string> {
  const time = String(Math.floor(nowMs / 1000));
  return {
    [LISTEN_HEADERS.merchant]: merchant,
    [LISTEN_HEADERS.time]: time,
    [LISTEN_HEADERS.signature]: listenSignature(merchant, time, method, path, key),
  };
}

/** What the check needs of the server: the merchants, and whether a merchant it does not know yet has the key anyone can compute. */
export interface ListenKeys {
  records: Pick<Repository, "merchant">;
  /** --merchant-keys id without --strict-merchants: a merchant's first payment provisions it with sk_test_<id> */
  provisionsById: boolean;
}

const one = (v: string | string[] | undefined) => (typeof v === "string" ? v : undefined);
const HEX64 = /^[0-9a-f]{64}$/;
/** compared against when there is no key, so an unknown merchant costs the time a known one does */
const NO_KEY = "sk_none_0000000000000000000000000000000";

/** The merchant a listen request acts for, or undefined when it is refused (whatever the reason). */
export function listenMerchant(
  keys: ListenKeys,
  headers: Record<string, string | string[] | undefined>,
  method: string,
  path: string,
  nowMs = Date.now(),
): string | undefined {
  const merchant = one(headers[LISTEN_HEADERS.merchant]) ?? "";
  const time = one(headers[LISTEN_HEADERS.time]) ?? "";
  const given = (one(headers[LISTEN_HEADERS.signature]) ?? "").toLowerCase();
  const known = keys.records.merchant(merchant)?.secret_key;
  const key = known ?? (keys.provisionsById && merchant !== "" ? provisionedKey(merchant) : undefined);
  const expected = listenSignature(merchant, time, method, path, key ?? NO_KEY);
  const matched = HEX64.test(given) && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
  const fresh = /^\d{1,12}$/.test(time) && Math.abs(nowMs / 1000 - Number(time)) <= LISTEN_WINDOW_S;
  return matched && fresh && key !== undefined ? merchant : undefined;
}

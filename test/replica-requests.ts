// Requests to Sandgate replicas, for the replica suites: JSON and form posts, a payment authorised
// on one replica, a payment's status as a query reads it, and replicas started on a fresh prefix.
import { expect } from "vitest";
import { ACME, ANY_SIGNATURE, directPayment, parseXml } from "./helpers.js";
import { freshPrefix, redisFlags, spawnSandgate, type Replica } from "./replica-helpers.js";

export const ENVELOPE = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, encryption_data: ANY_SIGNATURE };

export async function post(replica: Replica, path: string, body: Record<string, unknown>) {
  const res = await fetch(`${replica.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}
export const json = async (replica: Replica, path: string, init: RequestInit = {}) => {
  const res = await fetch(`${replica.url}${path}`, { ...init, headers: { "content-type": "application/json", ...init.headers } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

/** Two (or more) replicas on a fresh prefix of the run's Redis, or of a Redis (a cluster with `cluster`) at `url`. */
export async function replicas(n = 2, url?: string, extra: string[] = [], cluster = false): Promise<Replica[]> {
  const args = [...(url ? redisFlags(freshPrefix(), url, cluster) : redisFlags(freshPrefix())), "--seed", "replicas", ...extra];
  return Promise.all(Array.from({ length: n }, () => spawnSandgate(args)));
}

export async function authorised(replica: Replica, amount = "100.00") {
  const body = directPayment({ amount });
  const answer = parseXml((await post(replica, "/v1/authorise", body)).text);
  expect(answer.result_info).toBe("0000:Success");
  return { transaction_id: String(answer.transaction_id), order_no: String(body.order_no), currency: "USD", amount };
}

export const statusOf = async (replica: Replica, transactionId: string) =>
  String(JSON.parse((await post(replica, "/v1/retrievalTrans", { ...ENVELOPE, transaction_id: transactionId })).text).orders_list[0]?.payment_status);

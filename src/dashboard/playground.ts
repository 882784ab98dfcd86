// The dashboard's QA playground (the Playground tab): a tester with only a browser makes a payment
// as a merchant's server would. A form becomes the gateway request such a server sends: the
// operation's own fields, signed with the merchant's secret key (the dashboard is the operator's
// side and holds the keys, so the request passes in strict signature mode too and the request log
// shows a matched signature, as for a correct integration), and X-Sandbox-Outcome when the tester
// names an outcome. It goes to the gateway's core (http/operation.ts runOperation) as the request a
// server would send: validated, decided, stored, notified, logged and answered as any merchant's. Then 303 to the
// payment's result page; a request the gateway refused (a missing amount, a bad currency, ...) is
// shown in its form with the gateway's message (400), and stored nothing. Only this sandbox's
// merchants and their accounts: the gateway would provision an unknown one.
import { randomBytes } from "node:crypto";
import { Router, type Request, type Response } from "express";
import type { Deps } from "../deps/deps.js";
import { dashboardUnits, depsOf } from "../http/in-unit.js";
import { stageOf } from "../domain/completion.js";
import { authorise } from "../gateway/authorise.js";
import { checkout } from "../gateway/checkout.js";
import { pageUrl } from "../gateway/page-links.js";
import type { GatewayAnswer } from "../http/operation.js";
import { runAsMerchant } from "../http/as-merchant.js";
import { sendHtml } from "../render/layout.js";
import { problemPage } from "../render/payer-page-views.js";
import { BASE } from "./frame.js";
import {
  PLAYGROUND_FIELDS,
  PLAYGROUND_KINDS,
  playgroundPage,
  playgroundResultPage,
  type PlaygroundData,
  type PlaygroundKind,
  type PlaygroundResult,
  type PlaygroundValues,
} from "./playground-tab.js";
import { applyDue } from "../schedule/scheduler.js";
import { OUTCOME_HEADER, requestOutcomes } from "../scenarios/outcome-header.js";
import { signatureFields, signatureOf } from "../domain/signature.js";
import { secretKeyOf } from "../domain/merchants.js";
import { loadPaymentMethods } from "../store/fixtures/payment-method-profiles.js";
import type { Transaction } from "../domain/types.js";
import type { Store } from "../store/store.js";
import { queryText, pathParam } from "../admin/shared.js";

/** How long a merchant's server would wait for the gateway's answer: a scenario may make it hang (or wait up to 2 minutes). */
const PLAYGROUND_WAIT_MS = 10_000;

/** The card a named outcome pays with when no number is given (any valid number would do: the outcome wins). */
const OUTCOME_CARD = "4242424242424242";

/** Scenario rules name operations: the card form is authorise, the APM form apm, the checkout checkout. */
const RULE_OPERATION: Record<PlaygroundKind, string> = { card: "authorise", checkout: "checkout", apm: "apm" };

const isKind = (kind: string): kind is PlaygroundKind => (PLAYGROUND_KINDS as readonly string[]).includes(kind);

const fieldText = (req: Request, name: string): string => (typeof req.body?.[name] === "string" ? (req.body[name] as string).trim() : "");

export function playgroundRoutes(server: Deps): Router {
  const router = Router();
  // each page and form is one unit of work (http/in-unit.ts): every merchant's records, none, its
  // own units, or the merchant of the record the address names
  const inUnit = dashboardUnits(server);

  /** The fixtures' merchants first, then those provisioned by requests. */
  const merchants = (store: Store) => store.data.merchants.filter((m) => !m.provisioned).concat(store.data.merchants.filter((m) => m.provisioned));

  function defaults(store: Store, kind: PlaygroundKind): PlaygroundValues {
    const values = Object.fromEntries(PLAYGROUND_FIELDS.map((f) => [f, ""])) as PlaygroundValues;
    const accounts = merchants(store).flatMap((m) => m.accounts.map((a) => ({ merchant: m.merchant_id, account: a })));
    const profiles = loadPaymentMethods(server.config.fixtures);
    if (kind === "apm") {
      // the first account with a method that is not a card (nor a card wallet): pix on M10001/A10002
      const apm = accounts.flatMap(({ merchant, account }) =>
        account.payment_methods.filter((m) => !["card", "applepay", "googlepay"].includes(m)).map((method) => ({ merchant, account, method })),
      )[0];
      const currency = profiles.find((p) => p.payment_method === apm?.method)?.currencies[0] ?? "EUR";
      return {
        ...values,
        merchant_id: apm?.merchant ?? "",
        account_id: apm?.account.account_id ?? "",
        payment_method: apm?.method ?? "",
        amount: "25.00",
        currency,
      };
    }
    const card = accounts.find(({ account }) => account.payment_methods.includes("card")) ?? accounts[0];
    const base = { ...values, merchant_id: card?.merchant ?? "", account_id: card?.account.account_id ?? "", currency: "USD" };
    if (kind === "checkout") return { ...base, amount: "25.00" };
    // valid for three years by the clock of the merchant it pays for
    const year = String(store.records.nowOf(base.merchant_id, server.clock.now()).getUTCFullYear() + 3);
    return { ...base, amount: "10.00", card: OUTCOME_CARD, expiration_month: "12", expiration_year: year, security_code: "123" };
  }

  /** The card numbers the global scenario's authorise rules name, with the outcome each gets. */
  function testCards(): PlaygroundData["testCards"] {
    const cards = new Map<string, string>();
    for (const rule of server.scenarios.get(server.scenarios.global())?.rules ?? []) {
      const operation = rule.when.operation;
      const forAuthorise = operation === undefined || operation === "authorise" || (Array.isArray(operation) && operation.includes("authorise"));
      const named = typeof rule.when.card === "string" ? [rule.when.card] : Array.isArray(rule.when.card) ? rule.when.card : [];
      if (!forAuthorise || !rule.then.outcome) continue;
      for (const card of named) if (typeof card === "string" && !cards.has(card)) cards.set(card, `${rule.then.outcome} (${rule.from}/${rule.id})`);
    }
    return [...cards].map(([card, outcome]) => ({ card, outcome }));
  }

  function page(store: Store, sent?: { kind: PlaygroundKind; values: PlaygroundValues; error: string }): string {
    const all = merchants(store);
    const values = Object.fromEntries(PLAYGROUND_KINDS.map((k) => [k, sent?.kind === k ? sent.values : defaults(store, k)])) as PlaygroundData["values"];
    return playgroundPage({
      merchants: all,
      outcomes: Object.fromEntries(PLAYGROUND_KINDS.map((k) => [k, requestOutcomes(RULE_OPERATION[k])])) as PlaygroundData["outcomes"],
      testCards: testCards(),
      scenario: server.scenarios.global(),
      paymentMethods: [...new Set(all.flatMap((m) => m.accounts.flatMap((a) => a.payment_methods)))].filter((m) => m !== "card"),
      values,
      ...(sent ? { error: { kind: sent.kind, message: sent.error } } : {}),
    });
  }

  /** The payment as its result page shows it: the request that made it, the payer page it waits at. */
  function result(tx: Transaction, returned?: PlaygroundResult["returned"]): PlaygroundResult {
    const requestId = tx.history?.[0]?.request_id;
    const request = requestId
      ? server.requests.list({ merchant_id: tx.merchant_id, order_no: tx.order_no, limit: 50 }).find((r) => r.id === requestId)
      : undefined;
    const stage = stageOf(tx);
    return {
      tx,
      stage,
      payerPage: stage ? pageUrl(server.config.baseUrl ?? "", stage, tx.page_id) : "",
      request,
      exchange: request && server.requests.exchange(request.id),
      ...(returned ? { returned } : {}),
    };
  }

  router.get("/ui/playground", inUnit.all, (_req, res) => sendHtml(res, 200, page(depsOf(res, server).store)));

  router.post("/ui/playground", inUnit.own, async (req: Request, res: Response) => {
    const deps = server; // no unit around this post: it opens its own
    const asked = fieldText(req, "kind");
    const kind = isKind(asked) ? asked : "card";
    const values = Object.fromEntries(PLAYGROUND_FIELDS.map((f) => [f, fieldText(req, f)])) as PlaygroundValues;
    // this post runs no unit of its own across the gateway's request (in-unit.ts): what it reads, it
    // reads in short units, so a slow scenario never holds the sandbox's or a merchant's turn
    const refused = (status: number, error: string) => deps.store.unit((store) => sendHtml(res, status, page(store, { kind, values, error })));
    if (!isKind(asked)) return refused(400, `Unknown kind of payment "${asked}": send card, checkout or apm.`);

    const checked = await deps.store.unit((store) => {
      const merchant = store.records.merchant(values.merchant_id);
      if (!merchant)
        return `Unknown merchant "${values.merchant_id}": the playground pays as one of this sandbox's merchants (${merchants(store)
          .map((m) => m.merchant_id)
          .join(", ")}).`;
      if (!merchant.accounts.some((a) => a.account_id === values.account_id)) {
        return `Merchant ${merchant.merchant_id} has no account "${values.account_id}" (its accounts: ${merchant.accounts.map((a) => a.account_id).join(", ")}).`;
      }
      return { merchant_id: merchant.merchant_id, secret_key: merchant.secret_key };
    });
    if (typeof checked === "string") return refused(400, checked);
    const merchant = checked;
    // without payment_method the gateway would take the request for a card payment
    if (kind === "apm" && !values.payment_method)
      return refused(400, "Give a payment method (pix, boleto, ideal, paypal, ...): an APM payment is told apart by it.");

    const origin = deps.config.baseUrl ?? `${req.protocol}://${req.get("host") ?? "localhost"}`;
    const body = gatewayBody(kind, values, `${origin.replace(/\/$/, "")}${BASE}/ui/playground/returned`);
    const operation = kind === "checkout" ? checkout : authorise;
    const headers: Record<string, string> = {
      host: req.get("host") ?? "localhost",
      "content-type": "application/json",
      "user-agent": "Sandgate dashboard playground",
      ...(values.outcome ? { [OUTCOME_HEADER.toLowerCase()]: values.outcome } : {}),
    };
    const answer = await runAsMerchant(
      operation,
      body,
      { key: merchant.secret_key, headers, clientAddress: req.socket.remoteAddress ?? "", via: "playground" },
      deps,
    );

    // a scenario's latency is felt as a merchant's server would feel it (past the wait, it timed out)
    if (answer.waitMs > 0 && answer.waitMs < PLAYGROUND_WAIT_MS) await new Promise((resolve) => setTimeout(resolve, answer.waitMs));

    // the request (its X-Request-Id) and the payment it made, if any
    const requestId = answer.headers["X-Request-Id"]!;
    const made = await deps.store.unit(
      (store) => {
        const entry = deps.requests.list({ merchant_id: merchant.merchant_id, order_no: body.order_no!, limit: 20 }).find((r) => r.id === requestId);
        const tx = entry && store.records.transactionsByOrder(merchant.merchant_id, body.order_no!).find((t) => t.history?.[0]?.request_id === entry.id);
        return { entry, tx };
      },
      { merchant: merchant.merchant_id },
    );
    if (made.tx) return res.redirect(303, `${BASE}/ui/playground/result/${encodeURIComponent(made.tx.transaction_id)}`);
    const why = notMade(answer, made.entry?.result, made.entry?.rule);
    await refused(why.status, why.message);
  });

  router.get("/ui/playground/result/:id", inUnit.all, async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    const tx = deps.store.records.transaction(pathParam(req, "id"));
    if (!tx) return sendHtml(res, 404, problemPage("Unknown transaction", `No transaction ${pathParam(req, "id")}.`));
    sendHtml(res, 200, playgroundResultPage(result(tx)));
  });

  // the playground's return_url: the payer comes back with the signed result, checked as a merchant would
  router.get("/ui/playground/returned", inUnit.all, async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    const id = queryText(req, "transaction_id") ?? "";
    const tx = deps.store.records.transaction(id);
    if (!tx) return sendHtml(res, 404, problemPage("Unknown transaction", `No transaction "${id}" came back to the playground.`));
    const fields = signatureFields.payer_return.response;
    const params = Object.fromEntries(fields.map((f) => [f, queryText(req, f) ?? ""]));
    const expected = signatureOf(fields, params, secretKeyOf(deps.store.records, tx.merchant_id));
    const returned = { order_status: queryText(req, "order_status") ?? "", signatureValid: expected === queryText(req, "encryption_data")?.toLowerCase() };
    sendHtml(res, 200, playgroundResultPage(result(tx, returned)));
  });

  return router;
}

/** The request a merchant's server would send for the form: its fields as the gateway names them, the empty ones left out. */
function gatewayBody(kind: PlaygroundKind, v: PlaygroundValues, playgroundReturn: string): Record<string, string> {
  const body: Record<string, string> = {
    merchant_id: v.merchant_id,
    account_id: v.account_id,
    order_no: v.order_no || `QA-${randomBytes(5).toString("hex")}`,
    amount: v.amount,
    currency: v.currency,
    return_url: v.return_url || playgroundReturn,
    notify_url: v.notify_url,
  };
  if (kind === "card") {
    Object.assign(body, {
      card: v.card || (v.outcome ? OUTCOME_CARD : ""),
      expiration_month: v.expiration_month,
      expiration_year: v.expiration_year,
      security_code: v.security_code,
    });
  }
  if (kind === "apm") body.payment_method = v.payment_method;
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== ""));
}

/** Why no payment was made: the gateway's own message (its request log's result) and the rule, if one decided. */
function notMade(answer: GatewayAnswer, said: string | undefined, rule: string | undefined): { status: number; message: string } {
  const by = rule ? ` (scenario rule ${rule})` : "";
  // what a merchant's server would see of the scenario's fault: a hang or a long wait times out, a reset closes the connection
  const failure = answer.fault === "reset" ? "reset" : answer.fault === "hang" || answer.waitMs >= PLAYGROUND_WAIT_MS ? "timeout" : undefined;
  if (failure) {
    const what =
      failure === "timeout"
        ? `No answer from the gateway within ${PLAYGROUND_WAIT_MS / 1000} s${by}`
        : `The gateway closed the connection without an answer${by}`;
    return { status: 502, message: `${what}. No payment was stored.` };
  }
  const clientError = answer.status >= 400 && answer.status < 500;
  return {
    status: clientError ? 400 : 502,
    message: `The gateway did not make the payment (HTTP ${answer.status}): ${said ?? "see the request log"}${by}. Nothing was stored.`,
  };
}

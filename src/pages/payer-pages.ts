// /pay/:kind/:pageId: the pages a payer is sent to (hosted checkout, 3-D Secure challenge, APM
// page). The page id names the payment; the payment's stage (stageOf) says which page it waits at.
//   GET  shows that page, or the result once the payment is no longer pending.
//   POST is what the page's forms send, and what CI sends without a browser:
//        parse (outcome=<name> | card form | challenge_code | theForm's landing) → choose the
//        outcome → finishPayment → answer: 303 to return_url (or the next page), a result page,
//        or JSON {transaction_id, order_status, result_info, return_url} with Accept: application/json.
//   ?outcome=<name> on the address, GET or POST, acts as the form's outcome=<name> (and wins over
//        it): the pages' counterpart of X-Sandbox-Outcome, for a browser or a link with no form to fill.
import express, { Router, type NextFunction, type Request, type Response } from "express";
import type { Deps } from "../deps/deps.js";
import { depsOf, unavailablePage, unitFor } from "../http/in-unit.js";
import { codes, type FieldProblem } from "../domain/codes.js";
import { resolveOutcome, stageOf, stageOutcomes, THREEDS_CODE, type Stage } from "../domain/completion.js";
import { pageUrl } from "../gateway/page-links.js";
import { text } from "../domain/field-text.js";
import { sendHtml } from "../render/layout.js";
import { apmPage, checkoutPage, decodeItems, problemPage, resultPage, threeDsPage, type PageContext } from "../render/payer-page-views.js";
import { loadPaymentMethods } from "../store/fixtures/payment-method-profiles.js";
import type { Transaction } from "../domain/types.js";
import { outcomeRule } from "../scenarios/outcome-header.js";
import { readCardForm } from "./card-form.js";
import { finishPayment, resultView, returnUrlFor, type PayerAction } from "./finish.js";

const KINDS: readonly string[] = ["apm", "3ds", "checkout"];

const wantsJson = (req: Request) => (req.get("accept") ?? "").includes("application/json");

/** The outcome named on the page's address (a tester forcing the ending) or else in the form. */
const namedOutcome = (req: Request, body: Record<string, unknown>): unknown => req.query.outcome ?? body.outcome;

/** The form body (or JSON, for scripts); a body the parser refuses (too large, malformed) gets an HTML or JSON refusal. */
function readForm() {
  const urlencoded = express.urlencoded({ extended: false, limit: "1mb", parameterLimit: 2000 });
  const json = express.json({ limit: "100kb" });
  return (req: Request, res: Response, next: NextFunction) =>
    (req.is("application/json") ? json : urlencoded)(req, res, (err?: unknown) => {
      if (!err) return next();
      const status = (err as { status?: number }).status ?? 400;
      refuse(req, res, status, "form_refused", `the form could not be read: ${(err as Error).message}`);
    });
}

function refuse(req: Request, res: Response, status: number, error: string, message: string, details: string[] = []): void {
  if (wantsJson(req)) res.status(status).json({ error, message, ...(details.length ? { allowed: details } : {}) });
  else sendHtml(res, status, problemPage(status === 404 ? "Payment page not found" : "Request refused", message, details));
}

export function payerPages(server: Deps): Router {
  const router = Router();
  // each is a unit of the payment's merchant (found by the page's id before it starts)
  const inUnit = unitFor(server, { record: "page", param: "pageId" }, unavailablePage);

  router.get("/pay/:kind/:pageId", inUnit, async (req: Request<{ kind: string; pageId: string }>, res: Response) => {
    const { find, act, show, baseUrl } = pagesFor(depsOf(res, server));
    const tx = find(req, res);
    if (!tx) return;
    // ?outcome=<name>: opening the address ends the payment as posting outcome=<name> would (no form needed)
    if (req.query.outcome !== undefined) return act(req, res, tx, {});
    const stage = stageOf(tx);
    // an old address of a payment that moved on (checkout → 3-D Secure) leads to where it waits now
    if (stage && stage !== req.params.kind) return res.redirect(303, pageUrl(baseUrl(req), stage, tx.page_id));
    show(req, res, tx);
  });

  router.post("/pay/:kind/:pageId", inUnit, readForm(), async (req: Request<{ kind: string; pageId: string }>, res: Response) => {
    const { find, act, show } = pagesFor(depsOf(res, server));
    const tx = find(req, res);
    if (!tx) return;
    const body = (req.body ?? {}) as Record<string, unknown>;
    // theForm of /v1/checkout lands here with every request field: show the checkout
    if (namedOutcome(req, body) === undefined && body.allParams !== undefined) return show(req, res, tx);
    await act(req, res, tx, body);
  });

  return router;
}

/** What a page request works with, on the parts of its unit of work (its records handed over). */
function pagesFor(deps: Deps) {
  const baseUrl = (req: Request) => deps.config.baseUrl ?? `${req.protocol}://${req.get("host") ?? "localhost"}`;

  /** The payment of a page address, or a 404 sent and undefined. */
  const find = (req: Request<{ kind: string; pageId: string }>, res: Response): Transaction | undefined => {
    const { kind, pageId } = req.params;
    const tx = KINDS.includes(kind) && pageId ? deps.store.records.transactionByPage(pageId) : undefined;
    if (!tx) refuse(req, res, 404, "page_not_found", `No payment page ${kind}/${pageId}.`);
    return tx;
  };

  const shown = (tx: Transaction) => ({ tx, merchantName: deps.store.records.merchant(tx.merchant_id)?.name ?? tx.merchant_id });
  const context = (req: Request, tx: Transaction, stage: Stage): PageContext => ({ ...shown(tx), action: pageUrl(baseUrl(req), stage, tx.page_id) });

  /** The page the payment waits at, or its result. */
  const show = (req: Request, res: Response, tx: Transaction, status = 200, problems: FieldProblem[] = [], note = "") => {
    const stage = stageOf(tx);
    if (!stage) return sendHtml(res, status, resultPage(shown(tx), returnUrlFor(deps, tx), note));
    const ctx = context(req, tx, stage);
    if (stage === "3ds") return sendHtml(res, status, threeDsPage(ctx));
    if (stage === "apm") return sendHtml(res, status, apmPage(ctx, methodLabel(deps, tx.payment_method)));
    sendHtml(res, status, checkoutPage(ctx, decodeItems(tx.payer_request?.items ?? ""), problems));
  };

  /** The payer acted (a form, a script, or an address with ?outcome=): choose the outcome → finish → answer. */
  async function act(req: Request, res: Response, tx: Transaction, body: Record<string, unknown>): Promise<void> {
    const stage = stageOf(tx);
    if (!stage) return alreadyFinished(req, res, tx);
    const action = choose(deps, tx, stage, body, req);
    if ("problems" in action) {
      if (wantsJson(req)) return void res.status(400).json({ error: "invalid_card", message: "the card form has errors", problems: action.problems });
      return show(req, res, tx, 400, action.problems);
    }
    if ("refused" in action) return refuse(req, res, 400, "invalid_outcome", action.refused, stageOutcomes(stage));
    const refusal = await finishPayment(deps, tx, action);
    if (refusal) return alreadyFinished(req, res, tx);
    answer(req, res, tx);
  }

  function alreadyFinished(req: Request, res: Response, tx: Transaction): void {
    const message = `payment ${tx.transaction_id} is no longer pending (it is ${tx.state}, payment_status ${codes.payment_status[tx.state]}): nothing was charged again`;
    if (wantsJson(req)) res.status(409).json({ error: "payment_not_pending", message, ...resultView(deps, tx) });
    else show(req, res, tx, 409, [], message);
  }

  /** After the payer acted: the next page, the merchant's return_url, or the result here. */
  function answer(req: Request, res: Response, tx: Transaction): void {
    const next = stageOf(tx);
    const nextUrl = next === "3ds" ? pageUrl(baseUrl(req), next, tx.page_id) : "";
    if (wantsJson(req)) return void res.json({ ...resultView(deps, tx), ...(nextUrl ? { next_url: nextUrl } : {}) });
    if (nextUrl) return res.redirect(303, nextUrl);
    const back = returnUrlFor(deps, tx);
    if (back) return res.redirect(303, back);
    sendHtml(res, 200, resultPage(shown(tx), ""));
  }

  return { find, act, show, baseUrl };
}

type Choice = PayerAction | { problems: FieldProblem[] } | { refused: string };

/** What the payer did: a named outcome, the 3-D Secure code, or a card at the hosted checkout. */
function choose(deps: Deps, tx: Transaction, stage: Stage, body: Record<string, unknown>, req: Request): Choice {
  const base = { source: "payer" as const, path: req.path, ip: req.ip ?? "" };
  const named = namedOutcome(req, body);
  if (named !== undefined) {
    const chosen = text(named);
    const outcome = resolveOutcome(stage, chosen);
    if (!outcome) return { refused: `outcome "${chosen}" is not one this ${stage} page offers` };
    return { ...base, outcome, chosen, rule: `payer/${chosen}` };
  }
  if (stage === "3ds" && body.challenge_code !== undefined) {
    const passed = text(body.challenge_code).trim() === THREEDS_CODE;
    return {
      ...base,
      outcome: passed ? "threeds_passed" : "threeds_failed",
      chosen: "challenge code",
      rule: passed ? "payer/code-correct" : "payer/code-wrong",
    };
  }
  if (stage === "checkout" && body.card !== undefined) return payByCard(deps, tx, body, base);
  const offered = stage === "checkout" ? "outcome=<name> or the card form" : stage === "3ds" ? "outcome=<name> or challenge_code" : "outcome=<name>";
  return { refused: `nothing to do: send ${offered}` };
}

/** A card at the hosted checkout: checked like /v1/authorise, then decided by the scenario in force, as a direct payment. */
function payByCard(deps: Deps, tx: Transaction, body: Record<string, unknown>, base: Pick<PayerAction, "source" | "path" | "ip">): Choice {
  // a card expires by the merchant's own clock, as its direct payments' cards do
  const form = readCardForm(body, deps.store.records.nowOf(tx.merchant_id, deps.clock.now()));
  if ("problems" in form) return form;
  // the outcome the checkout request named (X-Sandbox-Outcome) ends the card, whatever the card or the scenarios say
  const named = tx.payer_request?.outcome;
  if (named) return { ...base, outcome: named, chosen: "card", rule: outcomeRule(named), card: form.card };
  if (form.expired) return { ...base, outcome: "expired_card", chosen: "card", rule: "builtin/card-expired", card: form.card };
  const fields = {
    ...tx.payer_request?.fields,
    card: form.card.number,
    expiration_month: form.card.expiration_month,
    expiration_year: form.card.expiration_year,
  };
  // the scenario the checkout request chose by header still applies (while it exists), else the merchant's or the global one
  const chosen = tx.payer_request?.scenario;
  const header = chosen && deps.scenarios.get(chosen) ? chosen : undefined;
  const decision = deps.scenarios.decide({ operation: "authorise", fields, merchantId: tx.merchant_id, header, orderNo: tx.order_no, fallback: "approved" });
  // an outcome that has no meaning here (an APM's pending, say) leaves the payment waiting
  const outcome = resolveOutcome("checkout", decision.outcome) ?? "checkout_pending";
  return { ...base, outcome, chosen: "card", rule: decision.rule, card: form.card, ...(decision.then.notify ? { notify: decision.then.notify } : {}) };
}

function methodLabel(deps: Deps, method: string): string {
  return loadPaymentMethods(deps.config.fixtures).find((m) => m.payment_method === method)?.label ?? method;
}

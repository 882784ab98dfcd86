// The dashboard's forms: each posts to /__sandbox/ui/..., acts, and answers 303 back to the page it
// came from with a message, so a reload never repeats an action. Each is the /ui/ twin of an operator
// call (api/operator-calls.ts `form`), mounted at the table's path in the call's unit of work.
import { Router, type Request, type Response } from "express";
import { codes, GatewayError } from "../domain/codes.js";
import type { Deps } from "../deps/deps.js";
import { depsOf, unavailablePage, unitFor } from "../http/in-unit.js";
import { OPERATOR_CALLS } from "../api/operator-calls.js";
import { callHandlers, routePathOf } from "../admin/call-handlers.js";
import { deleteSnapshot, restoreSnapshot, saveSnapshot } from "../admin/snapshots-api.js";
import { BASE, type Flash } from "./frame.js";
import { confirmResetPage } from "./overview.js";
import { sendHtml } from "../render/layout.js";
import { chargeSubscriptionNow, completePaymentNow, resetState, settlePayoutNow, settleRefundNow, type Done } from "../admin/actions.js";
import { pathParam } from "../admin/shared.js";
import { PORTAL_ACTIONS, PORTAL_CALLS, runPortal, type PortalResult } from "../admin/portal.js";
import { counted, durationText } from "../base/words.js";
import { saveScenario } from "../admin/scenario-editor.js";
import { editorPage } from "./scenario-editor-tab.js";
import { advanceClock, freezeClock, setClock, unfreezeClock, type ClockReading } from "../admin/clock-moves.js";

const CLOCK_MOVES = { advanceClock, setClock, freezeClock, unfreezeClock };

/** What the flash says after a clock move: whose clock, where it stands now, what fell due. */
const clockSaid = (v: ClockReading & { applied: number }): string =>
  `${v.merchant_id ? `Merchant ${v.merchant_id}'s clock` : "The sandbox clock"} ${v.frozen ? "stands at" : "reads"} ${v.now} (${durationText(v.offset_ms)} ahead of real time${v.frozen ? ", frozen" : ""}); ${counted(v.applied, "change")} fell due.`;

/** What the flash says after a portal action: what the gateway did, and where the payment stands. */
const portalSaid = ({ action, result, transaction: tx }: PortalResult): string => {
  const what =
    action === "refund"
      ? `Refund ${result.refund_reference_id ?? ""} of ${result.refund_amount ?? ""} accepted`
      : action === "review"
        ? `Review: ${result.review_flag === "approve" ? "approved" : "rejected"}`
        : `${action === "capture" ? "Captured" : "Cancelled"}`;
  return `${what}: payment ${tx.transaction_id} is now ${tx.state} (captured ${tx.captured_amount}, refunded ${tx.refunded_amount} ${tx.currency}).`;
};

const HERE = "http://sandgate.invalid";

/** `asked` when, resolved, it is a dashboard path of this server (never another origin, `//host`, `\\host` or a dot-dot out). */
function dashboardPath(asked: string): string | undefined {
  if (!asked.startsWith(`${BASE}/`) || /[\\\s]/.test(asked)) return undefined;
  const target = URL.canParse(asked, HERE) ? new URL(asked, HERE) : undefined;
  return target?.origin === HERE && target.pathname.startsWith(`${BASE}/`) && !target.pathname.startsWith("//") ? asked : undefined;
}

/** Back to a dashboard page (never elsewhere) with a message. */
function backTo(req: Request, res: Response, fallback: string, flash: Flash): void {
  const asked = typeof req.body?.back === "string" ? (req.body.back as string) : "";
  const target = new URL(dashboardPath(asked) ?? fallback, HERE);
  target.searchParams.delete("ok");
  target.searchParams.delete("error");
  target.searchParams.set(flash.ok ? "ok" : "error", flash.text);
  res.redirect(303, `${target.pathname}${target.search}`);
}

/** Runs an action and goes back with its message. */
async function act<T>(req: Request, res: Response, fallback: string, run: () => Promise<Done<T>> | Done<T>, said: (value: T) => string): Promise<void> {
  const done = await run();
  backTo(req, res, fallback, "problem" in done ? { text: done.problem.message, ok: false } : { text: said(done.value), ok: true });
}

const text = (req: Request, name: string): string => (typeof req.body?.[name] === "string" ? (req.body[name] as string) : "");

/** The forms' routes (the dashboard mounts them after its body parser). */
export function formRoutes(server: Deps): Router {
  const router = Router();
  const registry = server.scenarios;
  // each form is the /ui/ twin of an operator call (api/operator-calls.ts `form`): mounted below at
  // the table's path, in the call's unit of work, with the handler given here
  const { on: onForm, handlersOf: formOf } = callHandlers();
  const scenarioChange = (deps: Deps, run: () => string) => async (): Promise<Done<string>> => {
    try {
      const value = run();
      await deps.store.commit();
      return { value };
    } catch (err) {
      if (err instanceof GatewayError) return { problem: { status: 404, error: "unknown_scenario", message: err.info } };
      throw err;
    }
  };

  onForm("setGlobalScenario", (req, res) => {
    const deps = depsOf(res, server);
    return act(
      req,
      res,
      `${BASE}/`,
      scenarioChange(deps, () => (registry.setGlobal(text(req, "name")), registry.global())),
      (name) => `Global scenario is now ${name}.`,
    );
  });

  onForm("bindScenario", (req, res) => {
    const deps = depsOf(res, server);
    const merchant = text(req, "merchant_id").trim();
    if (!merchant) return backTo(req, res, `${BASE}/`, { text: "Give a merchant id to bind.", ok: false });
    return act(
      req,
      res,
      `${BASE}/`,
      scenarioChange(deps, () => (registry.bind(merchant, text(req, "name")), text(req, "name"))),
      (name) => `Merchant ${merchant} now uses ${name}.`,
    );
  });

  onForm("unbindScenario", async (req, res) => {
    const deps = depsOf(res, server);
    const merchant = text(req, "merchant_id");
    const removed = registry.unbind(merchant);
    if (removed) await deps.store.commit();
    backTo(
      req,
      res,
      `${BASE}/`,
      removed ? { text: `Merchant ${merchant} follows the global scenario again.`, ok: true } : { text: `Merchant ${merchant} had no binding.`, ok: false },
    );
  });

  // the clock card's buttons: one form, each button posting to its call's /ui/ twin
  const clockForm = (id: "advanceClock" | "setClock" | "freezeClock" | "unfreezeClock", body: (req: Request) => Record<string, string>) =>
    onForm(id, (req, res) => {
      const merchant = text(req, "merchant_id");
      const input = { ...body(req), ...(merchant ? { merchant_id: merchant } : {}) };
      return act(req, res, `${BASE}/`, () => CLOCK_MOVES[id](depsOf(res, server), input), clockSaid);
    });
  clockForm("advanceClock", (req) => ({ advance: text(req, "advance") }));
  // a datetime-local field has no zone: the dashboard's times are UTC
  clockForm("setClock", (req) => ({ to: /(Z|[+-]\d{2}:\d{2})$/.test(text(req, "to")) ? text(req, "to") : `${text(req, "to")}Z` }));
  clockForm("freezeClock", () => ({}));
  clockForm("unfreezeClock", () => ({}));

  // the editor's save: a scenario with a problem comes back to the editor with every problem (never saved)
  onForm("saveScenario", async (req, res) => {
    const deps = depsOf(res, server);
    const source = text(req, "source");
    const done = await saveScenario(deps, source);
    if ("problems" in done) {
      const page = editorPage({
        source,
        from: "your text (not saved)",
        names: registry.list().map((x) => x.name),
        savesTo: registry.savesTo(),
        problems: done.problems,
      });
      return sendHtml(res, 200, page);
    }
    const { name, saved_to, replaced } = done.saved;
    backTo(req, res, `${BASE}/ui/scenarios/${encodeURIComponent(name)}`, {
      text: `Scenario ${name} ${replaced ? "replaced" : "saved"} (${saved_to === "folder" ? "into the --scenarios folder" : "into the sandbox's state"}): bind a merchant to it below.`,
      ok: true,
    });
  });

  onForm("resetState", (req, res) => {
    const deps = depsOf(res, server);
    const merchant = text(req, "merchant_id");
    if (text(req, "confirm") !== "yes") return sendHtml(res, 200, confirmResetPage(merchant));
    return act(
      req,
      res,
      `${BASE}/`,
      () => resetState(deps, merchant ? { merchant_id: merchant } : { all: true }),
      (v) => (v.reset === "all" ? "Everything is back to the fixtures." : `Merchant ${v.reset} is back to the fixtures.`),
    );
  });

  onForm("completePayment", (req, res) => {
    const deps = depsOf(res, server);
    return act(
      req,
      res,
      `${BASE}/ui/transactions/${encodeURIComponent(pathParam(req, "transaction_id"))}`,
      () => completePaymentNow(deps, pathParam(req, "transaction_id"), text(req, "outcome"), req.originalUrl, req.ip ?? ""),
      (tx) => `Payment ${tx.transaction_id} is now ${tx.state} (${codes.payment_status[tx.state]}).`,
    );
  });

  // the merchant portal on a transaction's page: each action is the merchant's own gateway request
  for (const action of PORTAL_ACTIONS) {
    onForm(PORTAL_CALLS[action], (req, res) => {
      const id = pathParam(req, "transaction_id");
      return act(req, res, `${BASE}/ui/transactions/${encodeURIComponent(id)}`, () => runPortal(server, id, action, req.body), portalSaid);
    });
  }

  onForm("settleRefund", (req, res) => {
    const deps = depsOf(res, server);
    return act(
      req,
      res,
      `${BASE}/ui/transactions`,
      () => settleRefundNow(deps, pathParam(req, "ref"), text(req, "result")),
      (r) => `Refund ${r.refund_reference_id} is ${r.state}.`,
    );
  });

  onForm("completePayout", (req, res) => {
    const deps = depsOf(res, server);
    return act(
      req,
      res,
      `${BASE}/ui/payouts`,
      () => settlePayoutNow(deps, pathParam(req, "transaction_id"), "COMPLETED"),
      (p) => `Payout ${p.transaction_id} is ${p.status}.`,
    );
  });

  onForm("failPayout", (req, res) => {
    const deps = depsOf(res, server);
    return act(
      req,
      res,
      `${BASE}/ui/payouts`,
      () => settlePayoutNow(deps, pathParam(req, "transaction_id"), "FAILED", { failure_type: text(req, "failure_type") }),
      (p) => `Payout ${p.transaction_id} is ${p.status} (${p.failure_type}).`,
    );
  });

  onForm("chargeSubscription", (req, res) => {
    const deps = depsOf(res, server);
    return act(
      req,
      res,
      `${BASE}/ui/subscriptions`,
      () => chargeSubscriptionNow(deps, pathParam(req, "recurring_id")),
      (s) => `Subscription ${s.recurring_id}: ${counted(Number(s.deductions), "charge")}, ${s.state}.`,
    );
  });

  onForm("saveSnapshot", async (req, res) => {
    const deps = depsOf(res, server);
    const merchant = text(req, "merchant_id");
    return act(
      req,
      res,
      `${BASE}/`,
      () => saveSnapshot(deps, text(req, "name").trim(), merchant || undefined),
      (s) => `Snapshot ${s.name} saved: ${s.records} records of ${s.merchant === null ? "every merchant" : `merchant ${s.merchant}`}.`,
    );
  });

  onForm("restoreSnapshot", async (req, res) => {
    const deps = depsOf(res, server);
    return act(
      req,
      res,
      `${BASE}/`,
      () => restoreSnapshot(deps, pathParam(req, "name"), text(req, "all") === "true"),
      (s) => `Snapshot ${s.name} restored (${s.records} records, saved at ${s.saved_at}).`,
    );
  });

  onForm("deleteSnapshot", async (req, res) => {
    const deps = depsOf(res, server);
    return act(
      req,
      res,
      `${BASE}/`,
      () => deleteSnapshot(deps, pathParam(req, "name")),
      (name) => `Snapshot ${name} deleted.`,
    );
  });

  onForm("resendNotification", async (req, res) => {
    const deps = depsOf(res, server);
    const sent = await deps.notifier.resend(pathParam(req, "id"));
    const last = sent?.attempts.at(-1);
    backTo(
      req,
      res,
      `${BASE}/ui/notifications`,
      sent
        ? { text: `Notification ${sent.notification_id} resent: ${last?.http_status === null ? last.error : `HTTP ${last?.http_status}`}.`, ok: true }
        : { text: `No notification ${pathParam(req, "id")}.`, ok: false },
    );
  });

  for (const call of OPERATOR_CALLS)
    if (call.form) router.post(routePathOf(call.form), unitFor(server, call.scope, unavailablePage), ...formOf(call.operationId));
  return router;
}

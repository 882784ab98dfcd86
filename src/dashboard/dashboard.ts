// The QA dashboard at /__sandbox/: server-rendered pages over the same state and the same operator
// actions as the JSON API (admin/actions.ts). Every form posts to /__sandbox/ui/..., which acts and
// answers 303 back to the page with a message (forms.ts), so a reload never repeats an action.
// Mounted by operatorApi after the ADMIN_TOKEN guard (dashboard/session.ts lets the browser sign in).
import express, { Router, type Request } from "express";
import { codes } from "../domain/codes.js";
import type { Deps } from "../deps/deps.js";
import { dashboardUnits, depsOf } from "../http/in-unit.js";
import { listSnapshots } from "../admin/snapshots-api.js";
import { everyClock } from "../admin/clock-moves.js";
import { completionChoices, stageOf } from "../domain/completion.js";
import { pageUrl } from "../gateway/page-links.js";
import { type Flash } from "./frame.js";
import { notificationsPage, payoutsPage, requestsPage, subscriptionsPage } from "./lists.js";
import { overviewPage, scenarioPage } from "./overview.js";
import { editorPage, openInEditor, STARTER } from "./scenario-editor-tab.js";
import { transactionPage, transactionsPage } from "./transactions.js";
import { coveragePage } from "./coverage-tab.js";
import { verifyPage } from "./verify-tab.js";
import { receiverCheckPage } from "./receiver-check.js";
import { HAR_LIMIT_BYTES } from "../admin/verify-api.js";
import { filterProblem } from "../store/request-log.js";
import { sendHtml } from "../render/layout.js";
import { problemPage } from "../render/payer-page-views.js";
import { queryText, pathParam } from "../admin/shared.js";
import { applyDue } from "../schedule/scheduler.js";
import { playgroundRoutes } from "./playground.js";
import { formRoutes } from "./forms.js";
import { readScope, ruleCoverage } from "../scenarios/coverage.js";
import { PROBES, type Verdict } from "../receiver-check/probes.js";
import { verdictOn } from "../receiver-check/run.js";
import type { ProbeVerdicts } from "./transactions.js";
import type { Notification, Transaction } from "../domain/types.js";
import { allowedActions, refundable } from "../admin/portal.js";

/** Each receiver-check probe's verdict on what its receiver answered last, as the check judged it. */
function probeVerdicts(list: readonly Notification[]): ProbeVerdicts {
  const verdicts = new Map<string, { verdict: Verdict; expects: string }>();
  for (const n of list) {
    const probe = n.check && PROBES.find((p) => p.id === n.probe);
    const last = n.attempts.at(-1);
    if (probe && last) verdicts.set(n.notification_id, { verdict: verdictOn(probe, last.http_status), expects: probe.expects });
  }
  return verdicts;
}

const LIST_LIMIT = 200;

/** The message a redirect carried back (?ok= or ?error=). */
function flashOf(req: Request): Flash | undefined {
  const ok = queryText(req, "ok");
  const error = queryText(req, "error");
  return error ? { text: error, ok: false } : ok ? { text: ok, ok: true } : undefined;
}

export function dashboard(server: Deps): Router {
  const router = Router();
  // each page and form is one unit of work (http/in-unit.ts): every merchant's records, none, its
  // own units, or the merchant of the record the address names
  const inUnit = dashboardUnits(server);
  const registry = server.scenarios;
  const merchants = (deps: Deps) => deps.store.data.merchants.map((m) => m.merchant_id);
  // a scenario's text may be 64 KB (URL-encoded, up to three times that); every other form is small
  router.use("/ui/scenarios/save", express.urlencoded({ extended: false, limit: "200kb", parameterLimit: 5 }));
  router.use("/ui", express.urlencoded({ extended: false, limit: "20kb", parameterLimit: 50 }));
  // the Playground tab: payments made through the gateway's own request path (dashboard/playground.ts)
  router.use(playgroundRoutes(server));

  router.get("/", inUnit.all, async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    const data = {
      global: registry.global(),
      bindings: registry.bindings(),
      scenarios: registry.list(),
      errors: registry.errors(),
      merchants: merchants(deps),
      keys: deps.store.data.merchants.map(({ merchant_id, name, secret_key }) => ({ merchant_id, name, secret_key })),
      clocks: everyClock(deps),
      snapshots: await listSnapshots(deps),
    };
    sendHtml(res, 200, overviewPage(data, flashOf(req)));
  });

  router.get("/ui/scenarios/:name", inUnit.all, (req, res) => {
    const scenario = registry.get(pathParam(req, "name"));
    if (!scenario) return sendHtml(res, 404, problemPage("Unknown scenario", `No scenario "${pathParam(req, "name")}".`));
    sendHtml(res, 200, scenarioPage(scenario, merchants(depsOf(res, server)), flashOf(req)));
  });

  // the editor, opened on a scenario (?from=<name>: its text, or a copy of a shipped one) or a new one
  router.get("/ui/scenario-editor", inUnit.none, (req, res) => {
    const from = queryText(req, "from") ?? "";
    const opened = from ? openInEditor(registry, from) : { source: STARTER, from: "a new scenario" };
    if (!opened) return sendHtml(res, 404, problemPage("Unknown scenario", `No scenario "${from}".`));
    sendHtml(res, 200, editorPage({ ...opened, names: registry.list().map((x) => x.name), savesTo: registry.savesTo(), problems: [] }, flashOf(req)));
  });

  router.get("/ui/transactions", inUnit.all, async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    const filter = { merchant_id: queryText(req, "merchant_id") ?? "", order_no: queryText(req, "order_no") ?? "", status: queryText(req, "status") ?? "" };
    const found = deps.store.data.transactions.filter(
      (t) =>
        (!filter.merchant_id || t.merchant_id === filter.merchant_id) &&
        (!filter.order_no || t.order_no === filter.order_no) &&
        (!filter.status || t.state === filter.status || codes.payment_status[t.state] === filter.status),
    );
    // newest first by one time, the sandbox's: each record's own time less how far its merchant's clock leads
    const sandboxNow = deps.clock.now();
    const lead = new Map<string, number>();
    const leadOf = (id: string) => lead.get(id) ?? lead.set(id, deps.store.records.nowOf(id, sandboxNow).getTime() - sandboxNow.getTime()).get(id)!;
    const onSandboxClock = (t: Transaction) => Date.parse(t.created_at) - leadOf(t.merchant_id);
    const newest = found
      .slice()
      .sort((a, b) => onSandboxClock(b) - onSandboxClock(a))
      .slice(0, LIST_LIMIT);
    sendHtml(res, 200, transactionsPage(newest, filter, found.length, merchants(deps), everyClock(deps).merchants, flashOf(req)));
  });

  router.get("/ui/transactions/:id", inUnit.transaction, async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    const tx = deps.store.records.transaction(pathParam(req, "id"));
    if (!tx) return sendHtml(res, 404, problemPage("Unknown transaction", `No transaction ${pathParam(req, "id")}.`));
    const stage = stageOf(tx);
    const detail = {
      tx,
      stage,
      completion: stage ? completionChoices(stage) : [],
      refunds: [...deps.store.records.refundsOf(tx.transaction_id)],
      subscription: tx.recurring_id ? deps.store.records.subscription(tx.recurring_id) : undefined,
      notifications: deps.store.data.notifications
        .filter((n) => (n.payload.data as { transaction_id?: unknown }).transaction_id === tx.transaction_id)
        .reverse(),
      requests: deps.requests.list({ merchant_id: tx.merchant_id, order_no: tx.order_no, limit: 50 }).reverse(),
      pageUrl: stage ? pageUrl(deps.config.baseUrl ?? "", stage, tx.page_id) : "",
      portal: { actions: allowedActions(tx), refundable: refundable(tx) },
    };
    sendHtml(res, 200, transactionPage(detail, flashOf(req)));
  });

  router.get("/ui/requests", inUnit.all, (req, res) => {
    const deps = depsOf(res, server);
    const f = { merchant_id: "", operation: "", http_status: "", since: "", until: "" };
    for (const k of Object.keys(f) as (keyof typeof f)[]) f[k] = queryText(req, k)?.trim() ?? "";
    const given = Object.fromEntries(Object.entries(f).filter(([, v]) => v !== ""));
    const bad = filterProblem(given);
    if (bad) return sendHtml(res, 400, requestsPage([], f, bad));
    sendHtml(res, 200, requestsPage(deps.requests.list({ ...given, limit: 100 }).reverse(), f));
  });

  // ?check=<id>: one receiver check's notifications only (the Receiver check tab links here)
  router.get("/ui/notifications", inUnit.all, async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    const check = queryText(req, "check")?.trim() ?? "";
    // receiver-check probes are hidden unless asked for (?probes=1), or a check's own are (?check=)
    const probes = queryText(req, "probes") === "1";
    const all = deps.store.data.notifications;
    const list = check ? all.filter((n) => n.check === check) : probes ? all : all.filter((n) => !n.check);
    const hidden = check || probes ? 0 : all.length - list.length;
    const shown = list.slice(-LIST_LIMIT).reverse();
    sendHtml(res, 200, notificationsPage(shown, flashOf(req), check, { probes, hidden }, probeVerdicts(shown)));
  });

  router.get("/ui/coverage", inUnit.all, (req, res) => {
    const deps = depsOf(res, server);
    const merchant = queryText(req, "merchant_id")?.trim() ?? "";
    // each merchant that made a request, beside the total, when no one merchant is asked for
    const seen = merchant
      ? []
      : [
          ...new Set(
            deps.requests
              .list({ limit: 5_000 })
              .map((r) => r.merchant_id)
              .filter((m) => m !== ""),
          ),
        ].sort();
    // what is counted: some operations' rules only ("used": those each merchant's requests used), one scenario's
    const asked = { operations: queryText(req, "operations")?.trim() || undefined, scenario: queryText(req, "scenario") || undefined };
    const scopeOf = (m: string | undefined) =>
      readScope(asked, { scenario: (name) => registry.get(name) !== undefined, used: () => deps.scenarios.coverage.operationsUsed(m) });
    const scope = scopeOf(merchant || undefined);
    const refused = "refused" in scope ? scope.refused : undefined;
    const counted = (m: string | undefined) => {
      const own = scopeOf(m);
      return deps.scenarios.coverage.report(m, "refused" in own ? {} : own);
    };
    const byMerchant = seen.map(counted).filter((report) => ruleCoverage(report).answered > 0);
    const filter = { merchant, operations: asked.operations ?? "", scenario: asked.scenario ?? "", scenarios: registry.list().map((x) => x.name) };
    sendHtml(res, 200, coveragePage(counted(merchant || undefined), filter, byMerchant, refused));
  });

  // the page only; its script posts the recording to POST /__sandbox/verify (admin/verify-api.ts)
  router.get("/ui/verify", inUnit.none, (_req, res) => {
    return sendHtml(res, 200, verifyPage(registry.global(), HAR_LIMIT_BYTES));
  });

  // the page only; its script posts the form to POST /__sandbox/receiver-checks (admin/receiver-checks.ts)
  router.get("/ui/receiver-check", inUnit.all, (_req, res) => {
    const deps = depsOf(res, server);
    // the fixtures first, then merchants provisioned by requests
    const all = deps.store.data.merchants.filter((m) => !m.provisioned).concat(deps.store.data.merchants.filter((m) => m.provisioned));
    sendHtml(res, 200, receiverCheckPage(all.map((m) => ({ merchant_id: m.merchant_id, name: m.provisioned ? `${m.name} (provisioned)` : m.name }))));
  });

  router.get("/ui/payouts", inUnit.all, async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    sendHtml(res, 200, payoutsPage(deps.store.data.payouts.slice(-LIST_LIMIT).reverse(), flashOf(req)));
  });

  router.get("/ui/subscriptions", inUnit.all, async (req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    sendHtml(res, 200, subscriptionsPage(deps.store.data.subscriptions.slice(-LIST_LIMIT).reverse(), flashOf(req)));
  });

  // ---- actions: act, then 303 back with a message (forms.ts) ----
  router.use(formRoutes(server));
  return router;
}

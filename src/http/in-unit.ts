// Every request outside the gateway operations (payer pages, operator API, dashboard) is one unit
// of work from its first read of state to its answer: with a shared store it runs on the latest
// state and nothing another replica does interleaves with it. A route that names a record (a payer
// page, a payment to complete, a refund to settle, ...) is a unit of that record's merchant, found
// before it starts; the others see every merchant. The routes that send notifications and wait for
// the receivers are left out (their units are the dispatcher's own, around each attempt), and so
// are those that open units of their own (the clock, which then applies what fell due merchant by
// merchant; a receiver check; the playground's payment, which waits on the gateway's own request), so
// that no unit waits on a merchant's server or on another request.
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { resultInfo } from "../codes.js";
import type { Deps } from "../deps.js";
import type { Locatable, Store, UnitScope } from "../store/store.js";
import { sendHtml } from "../render/layout.js";
import { problemPage } from "../render/payer-page-views.js";

/** routes that open their own units (or, for verify, replay against a fresh Sandgate of its own) */
const OWN_UNITS = /^\/__sandbox\/((ui\/)?notifications\/(deliver|trigger|[^/]+\/resend)|(ui\/)?clock|receiver-checks|verify)$/;
/** posts that open their own units: the playground's payment (reads, then the gateway's own request, then reads again) */
const OWN_UNITS_POST = /^\/__sandbox\/ui\/playground$/;
/** routes that read no records */
const NO_RECORDS = /^\/__sandbox\/(health|openapi\.json|login|logout|ui\/verify)$/;

/** Routes naming a record by id, and which kind: their unit is the unit of that record's merchant. */
const BY_ID: [RegExp, Locatable][] = [
  [/^\/pay\/[^/]+\/([^/]+)$/, "page"],
  [/^\/__sandbox\/(?:ui\/)?(?:payments|transactions)\/([^/]+)(?:\/complete)?$/, "transaction"],
  [/^\/__sandbox\/(?:ui\/)?refunds\/([^/]+)\/settle$/, "refund"],
  [/^\/__sandbox\/(?:ui\/)?payouts\/([^/]+)\/(?:complete|fail)$/, "payout"],
  [/^\/__sandbox\/(?:ui\/)?subscriptions\/([^/]+)\/charge$/, "subscription"],
  [/^\/__sandbox\/notifications\/([^/]+)$/, "notification"],
];

/** Routes naming a merchant: their unit is that merchant's. */
const BY_MERCHANT = /^\/__sandbox\/merchants\/([^/]+)$/;

/** The unit a route runs in: its record's merchant (or no records, when no such record exists), none, or every merchant. */
async function scopeOf(store: Store, path: string): Promise<UnitScope | undefined> {
  if (NO_RECORDS.test(path)) return { none: true };
  const merchant = BY_MERCHANT.exec(path)?.[1];
  if (merchant !== undefined) {
    try {
      return { merchant: decodeURIComponent(merchant) };
    } catch {
      return { none: true };
    }
  }
  for (const [route, kind] of BY_ID) {
    const id = route.exec(path)?.[1];
    if (id === undefined) continue;
    if (store.kind !== "redis") return undefined;
    let named: string;
    try {
      named = decodeURIComponent(id);
    } catch {
      return { none: true }; // not an id any record has
    }
    const merchant = await store.locate(kind, named);
    return merchant === undefined ? { none: true } : { merchant };
  }
  return undefined;
}

/** The store could not be reached: 503 in the route's format (JSON for the operator API, HTML for pages and the dashboard). */
function unavailable(req: Request, res: Response): void {
  if (res.headersSent) return;
  const api = req.path.startsWith("/__sandbox/") && !req.path.startsWith("/__sandbox/ui") && req.path !== "/__sandbox/";
  if (api) res.status(503).json({ error: "store_unavailable", message: resultInfo("store_unavailable") });
  else sendHtml(res, 503, problemPage("Sandbox store unavailable", `${resultInfo("store_unavailable")}: try again in a moment.`));
}

export function inUnit(deps: Deps): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (OWN_UNITS.test(req.path) || (req.method === "POST" && OWN_UNITS_POST.test(req.path))) return next();
    scopeOf(deps.store, req.path)
      .then((scope) =>
        deps.store.unit(
          () =>
            new Promise<void>((resolve) => {
              res.once("close", resolve);
              next();
            }),
          scope,
        ),
      )
      .catch((err: unknown) => {
        deps.log.warn({ err: (err as Error).message, path: req.path }, "store unavailable");
        unavailable(req, res);
      });
  };
}

// A route outside the gateway operations (a payer page, an operator call, a dashboard page) is one
// unit of work from its first read of state to its answer: with a shared store it runs on the latest
// state and nothing another replica does interleaves with it. Each route declares which records its
// unit covers (RouteScope, in store/store.ts; the operator API's in its table, api/operator-calls.ts)
// and unitFor() opens that unit around the route's handler: a route naming a record (a payer page, a
// payment to complete, ...) is a unit of that record's merchant, found before it starts. Routes that
// send notifications and wait for receivers, replay a recording, or apply what fell due merchant by
// merchant declare "own": they open units of their own, so that no unit waits on a merchant's server
// or on another request.
import { problem } from "./problem.js";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { resultInfo } from "../domain/codes.js";
import type { Deps } from "../deps/deps.js";
import { StoreRefusal, unitDeps, type RouteScope, type Store, type UnitScope } from "../store/store.js";
import { sendHtml } from "../render/layout.js";
import { problemPage } from "../render/payer-page-views.js";

/**
 * How a route says the store could not be reached: 503 in its own format (JSON for the operator API,
 * HTML for pages); `reason` when the store refuses this replica (StoreRefusal), said as it is.
 */
export type Unavailable = (res: Response, reason?: string) => void;

const unavailableJson: Unavailable = (res, reason) => {
  problem(res, 503, "store_unavailable", resultInfo("store_unavailable", reason));
};

/** A page's (the payer's, the dashboard's): an HTML page that says so. */
export const unavailablePage: Unavailable = (res, reason) =>
  sendHtml(
    res,
    503,
    problemPage("Sandbox store unavailable", reason ? resultInfo("store_unavailable", reason) : `${resultInfo("store_unavailable")}: try again in a moment.`),
  );

/** The unit a route runs in: none, a merchant's, or (undefined) every merchant's. */
async function unitScopeOf(store: Store, scope: Exclude<RouteScope, "own">, req: Request): Promise<UnitScope | undefined> {
  if (scope === "none") return { none: true };
  if (scope === "all") return undefined;
  const value = req.params["merchant" in scope ? scope.merchant : scope.param];
  const named = typeof value === "string" ? value : "";
  if ("merchant" in scope) return { merchant: named };
  if (store.kind !== "redis") return undefined; // one process: every unit sees everything
  const merchant = await store.locate(scope.record, named);
  return merchant === undefined ? { none: true } : { merchant };
}

const UNIT = "sandgateUnit";

/**
 * What a route's handler works with: the parts its unit of work was handed (its view of the store),
 * or, for a route that opens its own units ("own") or runs before one, the server's.
 */
export const depsOf = (res: Response, server: Deps): Deps => (res.locals[UNIT] as Deps | undefined) ?? server;

/** The middleware that runs the rest of the route (to its answer) in the unit its scope names. */
export function unitFor(deps: Deps, scope: RouteScope, unavailable: Unavailable = unavailableJson): RequestHandler {
  if (scope === "own") return (_req, _res, next) => next();
  return (req: Request, res: Response, next: NextFunction) => {
    unitScopeOf(deps.store, scope, req)
      .then((unitScope) =>
        deps.store.unit(
          (store) =>
            new Promise<void>((resolve) => {
              res.once("close", resolve);
              // the route's handler finds the unit's parts here (depsOf): its records are handed over, not looked up
              res.locals[UNIT] = unitDeps(deps, store);
              next();
            }),
          unitScope,
        ),
      )
      .catch((err: unknown) => {
        deps.log.warn({ err: (err as Error).message, path: req.path }, "store unavailable");
        if (!res.headersSent) unavailable(res, err instanceof StoreRefusal ? err.message : undefined);
      });
  };
}

/** The dashboard's units for its pages (a 503 as a page); its forms take their operator call's (dashboard/dashboard.ts). */
export function dashboardUnits(deps: Deps) {
  const of = (scope: RouteScope) => unitFor(deps, scope, unavailablePage);
  return {
    all: of("all"),
    none: of("none"),
    own: of("own"),
    transaction: of({ record: "transaction", param: "id" }),
  };
}

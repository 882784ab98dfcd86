// Every request outside the gateway operations (payer pages, operator API, dashboard) is one unit
// of work from its first read of state to its answer: with a shared store it runs on the latest
// state and nothing another replica does interleaves with it. The routes that send notifications
// and wait for the receivers are left out (their units are the dispatcher's own, around each
// attempt), so that no unit waits on a merchant's server.
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { resultInfo } from "../codes.js";
import type { Deps } from "../deps.js";
import { sendHtml } from "../render/layout.js";
import { problemPage } from "../render/payer-pages.js";

const SENDS_NOTIFICATIONS = /^\/__sandbox\/(ui\/)?notifications\/(deliver|trigger|[^/]+\/resend)$/;
/** replays a recording against a fresh Sandgate of its own: nothing of this sandbox's state, and it takes seconds */
const VERIFY = "/__sandbox/verify";

/** The store could not be reached: 503 in the route's format (JSON for the operator API, HTML for pages and the dashboard). */
function unavailable(req: Request, res: Response): void {
  if (res.headersSent) return;
  const api = req.path.startsWith("/__sandbox/") && !req.path.startsWith("/__sandbox/ui") && req.path !== "/__sandbox/";
  if (api) res.status(503).json({ error: "store_unavailable", message: resultInfo("store_unavailable") });
  else sendHtml(res, 503, problemPage("Sandbox store unavailable", `${resultInfo("store_unavailable")}: try again in a moment.`));
}

export function inUnit(deps: Deps): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (SENDS_NOTIFICATIONS.test(req.path) || req.path === VERIFY) return next();
    deps.store
      .unit(
        () =>
          new Promise<void>((resolve) => {
            res.once("close", resolve);
            next();
          }),
      )
      .catch((err: unknown) => {
        deps.log.warn({ err: (err as Error).message, path: req.path }, "store unavailable");
        unavailable(req, res);
      });
  };
}

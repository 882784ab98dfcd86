// createApp(deps): wires HTTP only. Every gateway operation goes through mountOperation.
import express, { type NextFunction, type Request, type Response } from "express";
import { operatorApi } from "./admin/operator.js";
import type { Deps } from "./deps.js";
import { authorise } from "./gateway/authorise.js";
import { mountOperation, type Operation } from "./http/operation.js";
import { payerPages } from "./pages/payer-pages.js";
import { resultInfo } from "./codes.js";

export const OPERATIONS: readonly Operation[] = [authorise];

export function createApp(deps: Deps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  const gateway = express.Router();
  for (const op of OPERATIONS) mountOperation(gateway, op, deps);
  app.use(gateway);
  app.use(payerPages(deps));
  app.use("/__sandbox", operatorApi(deps));
  app.use((req, res) => {
    res.status(404).json({ return_status: "0", return_message: resultInfo("route_not_found", `${req.method} ${req.path}`) });
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    deps.log.error({ err }, "unhandled error");
    if (!res.headersSent) res.status(500).json({ return_status: "0", return_message: resultInfo("internal_error") });
  });
  return app;
}

// /__sandbox: the operator API. This first version: health and the request log.
import { timingSafeEqual } from "node:crypto";
import { Router, type NextFunction, type Request, type Response } from "express";
import type { Deps } from "../deps.js";

function guard(token: string | undefined) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!token || req.path === "/health") return next();
    const given = Buffer.from(req.get("authorization")?.replace(/^Bearer\s+/i, "") ?? "");
    const expected = Buffer.from(token);
    if (given.length === expected.length && timingSafeEqual(given, expected)) return next();
    res.status(401).json({ error: "unauthorised", message: "send Authorization: Bearer <ADMIN_TOKEN>" });
  };
}

export function operatorApi(deps: Deps): Router {
  const router = Router();
  router.use(guard(deps.config.adminToken));
  router.get("/health", (_req, res) => {
    res.json({ status: "ok", scenario: deps.config.scenario, signature_mode: deps.config.signatureMode, time: deps.clock.now().toISOString() });
  });
  router.get("/requests", (req, res) => {
    const q = (name: string) => (typeof req.query[name] === "string" ? (req.query[name] as string) : undefined);
    const limit = Math.min(Number(q("limit") ?? 100) || 100, 1000);
    res.json({ requests: deps.requests.list({ merchant_id: q("merchant_id"), order_no: q("order_no"), limit }) });
  });
  return router;
}

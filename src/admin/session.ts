// The ADMIN_TOKEN guard of /__sandbox. Scripts send `Authorization: Bearer <token>`; a tester's
// browser signs in once at the dashboard's form and keeps the token in an HttpOnly, SameSite=Strict
// cookie (so another site cannot make the browser act). Compared in constant time. Health and the
// sign-in itself are open; an unauthorised dashboard page gets the sign-in form, an API call 401 JSON.
import { timingSafeEqual } from "node:crypto";
import express, { Router, type NextFunction, type Request, type Response } from "express";
import { loginPage } from "../render/dashboard/overview.js";
import { sendHtml } from "../render/layout.js";
import { BASE } from "../render/dashboard/frame.js";
import { cookieValue } from "./cookies.js";

const COOKIE = "sandgate_admin";

const same = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

const isPage = (req: Request) => req.method === "GET" && (req.path === "/" || req.path.startsWith("/ui/"));

export function adminSession(token: string | undefined): Router {
  const router = Router();
  router.get("/login", (_req, res) => (token ? sendHtml(res, 200, loginPage("")) : res.redirect(303, `${BASE}/`)));
  router.post("/login", express.urlencoded({ extended: false, limit: "4kb" }), (req, res) => {
    const given = typeof req.body?.token === "string" ? (req.body.token as string) : "";
    if (token && !same(given, token)) return sendHtml(res, 401, loginPage("That token is not this sandbox's ADMIN_TOKEN."));
    if (token) res.cookie(COOKIE, given, { httpOnly: true, sameSite: "strict", path: BASE });
    res.redirect(303, `${BASE}/`);
  });
  router.post("/logout", (_req, res) => {
    res.clearCookie(COOKIE, { path: BASE });
    res.redirect(303, `${BASE}/login`);
  });
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (!token || req.path === "/health") return next();
    const bearer = req.get("authorization")?.replace(/^Bearer\s+/i, "");
    const given = bearer ?? cookieValue(req, COOKIE) ?? "";
    if (same(given, token)) return next();
    if (isPage(req)) return sendHtml(res, 401, loginPage(""));
    res.status(401).json({ error: "unauthorised", message: "send Authorization: Bearer <ADMIN_TOKEN> (or sign in at /__sandbox/)" });
  });
  return router;
}

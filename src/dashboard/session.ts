// The ADMIN_TOKEN guard of /__sandbox. Scripts send `Authorization: Bearer <token>`; a tester's
// browser signs in once at the dashboard's form and keeps a session value in an HttpOnly,
// SameSite=Strict cookie (Secure when --base-url is https), so another site cannot make the browser
// act. The cookie holds an HMAC of the token, never the token itself: a cookie read off a tester's
// machine opens the dashboard, not the bearer token CI scripts use, and changing the token ends
// every session. Compared in constant time. Health and the sign-in itself are open; an
// unauthorised dashboard page gets the sign-in form, an API call 401 JSON.
import { problem } from "../http/problem.js";
import { createHmac, timingSafeEqual } from "node:crypto";
import express, { Router, type NextFunction, type Request, type Response } from "express";
import { loginPage } from "./overview.js";
import { sendHtml } from "../render/layout.js";
import { BASE } from "./frame.js";
import { cookieValue } from "../admin/cookies.js";

const COOKIE = "sandgate_admin";

const same = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

const isPage = (req: Request) => req.method === "GET" && (req.path === "/" || req.path.startsWith("/ui/"));

/** The cookie's value for a token: derived from it, not it. */
const sessionValue = (token: string) => createHmac("sha256", token).update("sandgate admin session v1").digest("base64url");

/** `open`: the paths (under /__sandbox) anyone may call, as the table of calls marks them (health). */
export function adminSession(token: string | undefined, baseUrl: string | undefined, open: readonly string[]): Router {
  const router = Router();
  const session = token === undefined ? undefined : sessionValue(token);
  const secure = baseUrl?.toLowerCase().startsWith("https:") ?? false;
  router.get("/login", (_req, res) => (token ? sendHtml(res, 200, loginPage("")) : res.redirect(303, `${BASE}/`)));
  router.post("/login", express.urlencoded({ extended: false, limit: "4kb" }), (req, res) => {
    const given = typeof req.body?.token === "string" ? (req.body.token as string) : "";
    if (token && !same(given, token)) return sendHtml(res, 401, loginPage("That token is not this sandbox's ADMIN_TOKEN."));
    if (session) res.cookie(COOKIE, session, { httpOnly: true, sameSite: "strict", path: BASE, secure });
    res.redirect(303, `${BASE}/`);
  });
  router.post("/logout", (_req, res) => {
    res.clearCookie(COOKIE, { path: BASE });
    res.redirect(303, `${BASE}/login`);
  });
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (!token || open.includes(req.path)) return next();
    const bearer = req.get("authorization")?.replace(/^Bearer\s+/i, "");
    if (bearer !== undefined ? same(bearer, token) : same(cookieValue(req, COOKIE) ?? "", session!)) return next();
    if (isPage(req)) return sendHtml(res, 401, loginPage(""));
    problem(res, 401, "unauthorised", "send Authorization: Bearer <ADMIN_TOKEN> (or sign in at /__sandbox/)");
  });
  return router;
}

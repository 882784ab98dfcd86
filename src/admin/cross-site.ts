// Who may change a shared sandbox from a browser. A web page a tester happens to visit must not be
// able to act on /__sandbox through the tester's browser (switch the scenario, reset, complete a
// payment), with or without ADMIN_TOKEN:
// - a state-changing request (anything but GET, HEAD, OPTIONS) that a browser marks as coming from
//   another origin (Sec-Fetch-Site: cross-site or same-site, or an Origin that is not this server's)
//   is refused, 403 in the surface's format (JSON for the API, a page for the dashboard). Clients
//   without those headers (curl, CI scripts, the typed client, a PHP pipeline) are not browsers
//   acting for someone else, and go on as before;
// - every dashboard form carries a per-browser token (a random value in a SameSite=Strict cookie,
//   echoed in a hidden field: the double-submit pattern), checked on each form post, so a form
//   that did not come from a dashboard page is refused even by a browser that sends neither header.
import { problem } from "../http/problem.js";
import { randomBytes, timingSafeEqual } from "node:crypto";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { problemPage } from "../render/payer-page-views.js";
import { sendHtml } from "../render/layout.js";
import { cookieValue } from "./cookies.js";
import { SANDBOX_PATH } from "../base/paths.js";

/** The cookie and field of the dashboard's form token. */
const FORM_COOKIE = "sandgate_form";
const FORM_FIELD = "_form";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);
const TOKEN = /^[0-9a-f]{32}$/;

/** A request for a dashboard page or form (HTML), rather than the JSON API. */
const isDashboard = (path: string) => path === "/" || path.startsWith("/ui/") || path === "/login" || path === "/logout";

/** A 403 in the surface's format: a page for the dashboard (titled `title`), `{error, message}` for the JSON API. */
export function refuseBrowser(req: Request, res: Response, title: string, error: string, message: string, onPage = message): void {
  if (isDashboard(req.path)) sendHtml(res, 403, problemPage(title, onPage));
  else problem(res, 403, error, message);
}

function refuse(req: Request, res: Response, why: string): void {
  const message = `${why}: state changes come from this sandbox's own pages or from clients that are not browsers (curl, scripts)`;
  refuseBrowser(req, res, "Refused: another site", "cross_site_refused", message, `${message}. Open the dashboard and try again from there.`);
}

/** host[:port] of a URL, or undefined when it is not one ("null", say). */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether an Origin names this server: the host the request was sent to, or --base-url's. By host,
 * not scheme: behind a TLS proxy the browser's origin is https while Sandgate serves http.
 */
function isOwn(req: Request, origin: string, baseUrl: string | undefined): boolean {
  const host = hostOf(origin);
  return host !== undefined && (host === req.get("host") || (baseUrl !== undefined && host === hostOf(baseUrl)));
}

/** Refuses state changes a browser sends on behalf of another site (mounted on /__sandbox). */
export function refuseCrossSite(baseUrl: string | undefined): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (SAFE.has(req.method)) return next();
    const site = req.get("sec-fetch-site");
    if (site === "cross-site" || site === "same-site") return refuse(req, res, `a request from another site (Sec-Fetch-Site: ${site})`);
    const origin = req.get("origin");
    if (site === undefined && origin !== undefined && !isOwn(req, origin, baseUrl))
      return refuse(req, res, `a request from another origin (Origin: ${origin})`);
    next();
  };
}

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * GET: the browser's form token (made when it has none) for the page's forms (res.locals.formToken;
 * sendHtml puts it in every form that posts). POST to a dashboard form: refused unless its field
 * matches the cookie. Mounted on /__sandbox after the form body is parsed.
 */
export function formTokens(): RequestHandler[] {
  // the dashboard's forms (and the sign-in) are read here, so the token is checked before any of them acts
  const forms = express.urlencoded({ extended: false, limit: "20kb", parameterLimit: 50 });
  const readForm: RequestHandler = (req, res, next) => (!SAFE.has(req.method) && isDashboard(req.path) ? forms(req, res, next) : next());
  return [
    readForm,
    (req: Request, res: Response, next: NextFunction) => {
      const held = cookieValue(req, FORM_COOKIE);
      const token = held !== undefined && TOKEN.test(held) ? held : undefined;
      if (SAFE.has(req.method)) {
        if (!isDashboard(req.path)) return next();
        const issued = token ?? randomBytes(16).toString("hex");
        if (!token) res.cookie(FORM_COOKIE, issued, { httpOnly: true, sameSite: "strict", path: SANDBOX_PATH });
        res.locals.formToken = issued;
        return next();
      }
      if (!isDashboard(req.path)) return next();
      const sent = (req.body as Record<string, unknown> | undefined)?.[FORM_FIELD];
      if (token && typeof sent === "string" && same(sent, token)) {
        res.locals.formToken = token; // a page answered to the post (a confirmation) has forms too
        return next();
      }
      refuse(req, res, "a form that did not come from this dashboard (its form token is missing or does not match)");
    },
  ];
}

// Which Host names /__sandbox answers a browser under (DNS rebinding). A page served from
// http://rebind.test:8080/ whose name an attacker then points at the sandbox is, to the browser, the
// same origin as the sandbox: its requests carry a matching Origin and Sec-Fetch-Site: same-origin,
// and would pass the cross-site check. What gives it away is the Host it sends: not a name this
// sandbox is known by. So a request a browser makes is served only
// under a loopback name or an IP address (which no DNS answer can rebind), the host of --base-url,
// or a name --allowed-hosts lists (as Vite's server.allowedHosts and webpack-dev-server's
// allowedHosts do). A browser is told by Origin or Sec-Fetch-*, and by its User-Agent: over plain
// http to a name that is not localhost, Chromium sends no Sec-Fetch-* (they go to trustworthy origins
// only), and a same-origin GET no Origin, so a rebinding page's read of the HAR carried neither; a
// page's script cannot change the User-Agent. Scripts and CI send none of these and reach /__sandbox under any name
// (`sandgate ctl --url http://sandgate:8080` in docker compose needs no setting). The gateway's
// operations and payer pages are not concerned: they answer under any Host, as the gateway does.
import { isIP } from "node:net";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { refuseBrowser } from "./cross-site.js";

/** The host name of a Host header ("name:port", "[::1]:port"), lower-cased, without a final dot. */
function hostName(host: string): string {
  const name = host.startsWith("[") ? host.slice(1, host.indexOf("]")) : host.replace(/:\d*$/, "");
  return name.toLowerCase().replace(/\.$/, "");
}

/** Whether `name` is one of the always-served: an IP address, localhost or a name under .localhost. */
const alwaysServed = (name: string) => isIP(name) !== 0 || name === "localhost" || name.endsWith(".localhost");

/** An --allowed-hosts entry is a host name, or `*.` and a domain: any name under it, not the domain itself. */
function hostAllowed(name: string, allowed: readonly string[]): boolean {
  if (alwaysServed(name)) return true;
  return allowed.some((entry) => (entry.startsWith("*.") ? name.endsWith(entry.slice(1)) : name === entry));
}

/** --allowed-hosts as a list (entries already checked by the config), plus --base-url's host. */
function allowedHosts(list: string | undefined, baseUrl: string | undefined): string[] {
  const entries = (list ?? "")
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "");
  if (baseUrl) entries.push(new URL(baseUrl).hostname.toLowerCase().replace(/^\[|\]$/g, ""));
  return entries;
}

const fromBrowser = (req: Request) =>
  req.get("origin") !== undefined ||
  req.get("sec-fetch-site") !== undefined ||
  req.get("sec-fetch-mode") !== undefined ||
  req.get("sec-fetch-dest") !== undefined ||
  /^Mozilla\//.test(req.get("user-agent") ?? "");

/** Refuses a browser's request to /__sandbox under a Host this sandbox is not known by (mounted on /__sandbox, first). */
export function checkHost(list: string | undefined, baseUrl: string | undefined): RequestHandler {
  const allowed = allowedHosts(list, baseUrl);
  return (req: Request, res: Response, next: NextFunction) => {
    if (!fromBrowser(req)) return next();
    const name = hostName(req.get("host") ?? "");
    if (hostAllowed(name, allowed)) return next();
    const message = `a browser reached this sandbox as "${name}", a name it does not serve its dashboard and operator API under (a DNS rebinding page would look like this). If that is this sandbox's own name, start it with --allowed-hosts ${name} (env ALLOWED_HOSTS, comma-separated, *.example.com allowed) or --base-url`;
    refuseBrowser(req, res, "Refused: unknown host name", "host_not_allowed", message);
  };
}

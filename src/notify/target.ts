// Where a notification may be sent: http and https URLs only, and never back into Sandgate itself.
// A notify_url on this server's gateway (/v1/), operator (/__sandbox) or payer (/pay/) paths would
// change the sandbox's own state or loop (a notification creating notifications), so it is refused.
// "This server" is a loopback name or address, an address of this machine's interfaces, --host or
// --base-url's host, on the port it listens on (any port while that is unknown and --port is 0) or
// --base-url's port. A DNS name that resolves here is not recognised: the guard is about mistakes,
// not about hostile URLs. With --notify-allow, only the hosts it lists are sent to (allow-list.ts).
import { networkInterfaces } from "node:os";
import type { Config } from "../config/config.js";
import { parseAllowList } from "../config/notify-allow-list.js";
import { SANDBOX_PATH } from "../base/paths.js";
import { GATEWAY_PREFIX } from "../domain/gateway-operations.js";

const OWN_PATHS = [GATEWAY_PREFIX.slice(0, -1), SANDBOX_PATH, "/pay"] as const;
const WILDCARD_HOSTS = new Set(["", "0.0.0.0", "::"]);

export interface TargetCheck {
  /** The reason a URL is refused, or undefined when it may be tried. */
  refusal(url: string): string | undefined;
  /** The port the server listens on, once known (startSandbox tells it). */
  listening(port: number): void;
}

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, "").toLowerCase();

function isLoopback(hostname: string): boolean {
  const h = bare(hostname);
  return h === "localhost" || h.endsWith(".localhost") || /^127\./.test(h) || WILDCARD_HOSTS.has(h) || h === "::1" || /^::ffff:(127\.|7f)/.test(h);
}

const effectivePort = (u: URL) => Number(u.port || (u.protocol === "https:" ? 443 : 80));

function ownPath(pathname: string): string | undefined {
  let path = pathname;
  try {
    path = decodeURIComponent(pathname);
  } catch {
    // keep it encoded: a malformed escape cannot name a route anyway
  }
  path = path.replace(/\/{2,}/g, "/").toLowerCase();
  return OWN_PATHS.find((root) => path === root || path.startsWith(`${root}/`));
}

/** Every address of this machine's network interfaces (a server bound to 0.0.0.0 answers on all). */
function interfaceAddresses(): Set<string> {
  const all = Object.values(networkInterfaces()).flatMap((list) => list ?? []);
  return new Set(all.map((a) => bare(a.address)));
}

export function targetCheck(config: Pick<Config, "host" | "port" | "baseUrl" | "notifyAllow">): TargetCheck {
  const allowed = config.notifyAllow === undefined ? undefined : parseAllowList(config.notifyAllow);
  const base = config.baseUrl ? safeUrl(config.baseUrl) : undefined;
  const localHosts = WILDCARD_HOSTS.has(config.host) ? interfaceAddresses() : new Set([bare(config.host)]);
  const ports = new Set(config.port === 0 ? [] : [config.port]);
  const isSelf = (u: URL) => {
    const host = bare(u.hostname);
    if (base && host === bare(base.hostname) && effectivePort(u) === effectivePort(base)) return true;
    const local = isLoopback(host) || localHosts.has(host);
    return local && (ports.size === 0 || ports.has(effectivePort(u)));
  };
  return {
    refusal(url) {
      const u = safeUrl(url);
      if (!u) return `refused: notify_url "${url}" is not a valid URL`;
      if (u.protocol !== "http:" && u.protocol !== "https:") return `refused: notify_url must be an http or https URL, not ${u.protocol.replace(/:$/, "")}`;
      if (allowed && !allowed.allows(u.hostname)) {
        return `refused: notify_url host ${u.hostname} is not in --notify-allow (${allowed.text}); nothing was sent`;
      }
      const path = ownPath(u.pathname);
      if (path && isSelf(u)) {
        return `refused: ${url} is Sandgate's own ${path}/ path; a notification there would loop back into the sandbox (point notify_url at your own receiver)`;
      }
      return undefined;
    },
    listening(port) {
      ports.add(port);
    },
  };
}

function safeUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

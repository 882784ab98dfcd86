// What a Sandgate listening beyond loopback leaves open, said once at start (issue 27): anyone who
// can reach it may drive the operator API and the dashboard without ADMIN_TOKEN, and make it send
// notifications to any host without --notify-allow. Fine on a laptop; worth knowing on a network.
import type { Config } from "./config.js";
import { counted } from "../base/words.js";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|\[::1\]|localhost)$/i;

/** The warning for this configuration, or undefined when nothing is open beyond this machine. */
export function exposureWarning(config: Pick<Config, "host" | "adminToken" | "notifyAllow"> & Partial<Pick<Config, "merchantKeys">>): string | undefined {
  if (LOOPBACK.test(config.host)) return undefined;
  const open: string[] = [];
  // random keys isolate merchants only while they are shown to operators alone
  const keys = config.merchantKeys === "random" ? ", and read every merchant's random key (--merchant-keys random isolates nothing without it)" : "";
  if (!config.adminToken)
    open.push(`without ADMIN_TOKEN, anyone who reaches it can use the dashboard and the operator API (switch scenarios, reset, complete payments)${keys}`);
  if (config.notifyAllow === undefined) open.push("without --notify-allow, it sends notifications and receiver checks to any host a request names");
  if (!open.length) return undefined;
  return `listening on ${config.host}, beyond this machine: ${open.join("; ")}. See docs/security.md`;
}

/** The shortest ADMIN_TOKEN that is not warned about at start. */
const SHORT_TOKEN = 16;

/** A warning for a token short enough to guess, or undefined. */
export function tokenWarning(config: Pick<Config, "adminToken">): string | undefined {
  const length = config.adminToken?.length ?? SHORT_TOKEN;
  return length < SHORT_TOKEN
    ? `ADMIN_TOKEN is ${counted(length, "character")} long: anyone who can reach /__sandbox can guess a short token; use ${SHORT_TOKEN} or more (openssl rand -hex 16)`
    : undefined;
}

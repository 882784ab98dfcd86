// POST /__sandbox/receiver-checks {url, merchant_id, transaction_id?, key?}: `sandgate
// check-receiver` over HTTP. Checks a merchant's notification receiver from THIS Sandgate (its
// merchants, its notifications log: every probe is listed there with ?check=<id>) and answers the
// report (src/receiver-check). Bad input is 400 {error, message} and changes nothing.
// Mounted by operatorApi (ADMIN_TOKEN guard and JSON body parser included).
import { type Request } from "express";
import type { Deps } from "../deps/deps.js";
import { depsOf } from "../http/in-unit.js";
import type { On } from "./call-handlers.js";
import { CheckRefused } from "../receiver-check/input.js";
import { runReceiverCheck } from "../receiver-check/run.js";
import { receiverCheckBody } from "../api/operator-bodies.js";
import { throughGate } from "./gate.js";
import { problem, issuesText } from "./shared.js";

/**
 * This server at the address the request reached it on: the check makes its payment there, and a
 * receiver URL at that port is Sandgate itself, whatever port the server was told to use.
 */
function reachedAt(req: Request): string {
  const address = (req.socket.localAddress ?? "127.0.0.1").replace(/^::ffff:/, "");
  return `http://${address.includes(":") ? `[${address}]` : address}:${req.socket.localPort ?? 80}`;
}

export function receiverChecksApi(server: Deps, on: On): void {
  // a check sends a dozen probes and waits for each: two at a time per process, four more waiting
  on("checkReceiver", throughGate(2, 4, "the receiver check", 5), async (req, res) => {
    const deps = depsOf(res, server);
    const parsed = receiverCheckBody.safeParse(req.body ?? {});
    if (!parsed.success) {
      const detail = issuesText(parsed.error);
      return problem(res, 400, "invalid_check", detail);
    }
    try {
      res.json(await runReceiverCheck(deps, parsed.data, reachedAt(req)));
    } catch (err) {
      if (err instanceof CheckRefused) return problem(res, err.status, err.error, err.message);
      deps.log.error({ err }, "receiver check failed");
      problem(res, 500, "check_failed", `the check could not run: ${(err as Error).message}`);
    }
  });
}

// /__sandbox/listen: `sandgate listen`'s three calls, open (no ADMIN_TOKEN) and authenticated by the
// merchant's key instead (notify/listen-auth.ts). GET is a stream of server-sent events: `ready` (with
// the listener's id), then each of the merchant's notification attempts as a `notification` event (id:
// <notification_id>.<attempt>), a comment every 15 s to keep proxies from closing it. POST …/answers
// reports what the listener's receiver answered to one of them; DELETE …/<listener id> is its goodbye
// (no grace period after it). Mounted by operatorApi.
import type { Request, Response } from "express";
import type { Deps } from "../deps/deps.js";
import { depsOf } from "../http/in-unit.js";
import type { On } from "./call-handlers.js";
import { problem, issuesText } from "./shared.js";
import { ID_MAX } from "../http/fields.js";
import { listenAnswerBody } from "../api/operator-bodies.js";
import { listenMerchant } from "../notify/listen-auth.js";
import type { ListenOffer } from "../notify/listeners.js";
import { timing } from "../config/timings.js";

const sse = (event: string, data: unknown, id?: string) => `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

export function listenApi(server: Deps, on: On): void {
  /** The merchant the request proves it acts for, or a 401 answered (the same whatever failed). */
  const authorised = async (deps: Deps, req: Request, res: Response): Promise<string | undefined> => {
    const claimed = req.get("x-sandgate-merchant") ?? "";
    const keys = { provisionsById: deps.config.merchantKeys === "id" && !deps.config.strictMerchants };
    const merchant =
      claimed === "" || claimed.length > ID_MAX
        ? undefined
        : await deps.store.unit((store) => listenMerchant({ ...keys, records: store.records }, req.headers, req.method, req.baseUrl + req.path), {
            merchant: claimed,
          });
    if (merchant === undefined)
      problem(
        res,
        401,
        "listen_refused",
        "the listen headers do not prove a merchant's key: X-Sandgate-Merchant, X-Sandgate-Time (unix seconds, within 300 s) and X-Sandgate-Signature (docs/notifications.md)",
      );
    return merchant;
  };

  on("listenNotifications", async (req, res) => {
    const deps = depsOf(res, server);
    const merchant = await authorised(deps, req, res);
    if (merchant === undefined) return;
    // offers the hub sends before the stream's first lines are kept for after them
    let early: ListenOffer[] | undefined = [];
    const connection = deps.notifier.listeners.connect(merchant, {
      send: (offer) => (early ? early.push(offer) : res.write(sse("notification", offer, offer.id))),
      end: () => res.end(),
    });
    if ("refused" in connection) return problem(res, 429, "too_many_listeners", connection.refused);
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      // nginx and its kind would hold the events back otherwise
      "x-accel-buffering": "no",
    });
    res.write(`retry: 1000\n\n${sse("ready", { merchant_id: merchant, grace_ms: timing("listenGraceMs"), listener_id: connection.id })}`);
    for (const offer of early) res.write(sse("notification", offer, offer.id));
    early = undefined;
    const beat = setInterval(() => res.write(": still here\n\n"), timing("listenHeartbeatMs"));
    beat.unref();
    res.on("close", () => {
      clearInterval(beat);
      connection.close();
    });
  });

  on("endListening", async (req, res) => {
    const deps = depsOf(res, server);
    const merchant = await authorised(deps, req, res);
    if (merchant === undefined) return;
    res.json({ ended: deps.notifier.listeners.leave(merchant, String(req.params.listener)) });
  });

  on("answerListenedNotification", async (req, res) => {
    const deps = depsOf(res, server);
    const merchant = await authorised(deps, req, res);
    if (merchant === undefined) return;
    const parsed = listenAnswerBody.safeParse(req.body ?? {});
    if (!parsed.success) {
      const detail = issuesText(parsed.error);
      return problem(res, 400, "invalid_answer", detail);
    }
    const { offer, ...report } = parsed.data;
    res.json({ recorded: await deps.notifier.listeners.answer(merchant, offer, report) });
  });
}

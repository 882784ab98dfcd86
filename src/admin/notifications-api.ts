// /__sandbox/notifications: the outbox with every attempt, resend, a test trigger, and "deliver
// everything due now" for CI. Mounted by operatorApi (guard and JSON body parser included).
import type { Deps } from "../deps/deps.js";
import { depsOf } from "../http/in-unit.js";
import type { On } from "./call-handlers.js";
import { problem, queryText, whereQuery, pathParam, issuesText } from "./shared.js";
import { applyDue } from "../schedule/scheduler.js";
import { triggerBody } from "../api/operator-bodies.js";
import { enqueueNotification } from "../notify/outbox.js";
import type { Notification } from "../domain/types.js";

const STATES: readonly Notification["state"][] = ["pending", "delivered", "failed", "dropped"];

export function notificationsApi(server: Deps, on: On): void {
  // ?merchant_id=&event=&state=&check=: every notification, oldest first, with every attempt
  on("listNotifications", async (req, res) => {
    const deps = depsOf(res, server);
    const state = queryText(req, "state");
    if (state !== undefined && !(STATES as readonly string[]).includes(state)) {
      return problem(res, 400, "invalid_state", `state must be one of ${STATES.join(", ")}`);
    }
    await applyDue(deps);
    res.json({ notifications: whereQuery(req, deps.store.data.notifications, ["merchant_id", "event", "state", "check"]) });
  });

  // Sends everything due now and waits (a hanging receiver holds it up to the attempt timeout).
  on("deliverNotifications", async (_req, res) => {
    const deps = depsOf(res, server);
    await applyDue(deps);
    const attempts = await deps.notifier.drain();
    const count = (s: Notification["state"]) => deps.store.data.notifications.filter((n) => n.state === s).length;
    res.json({ attempts, pending: count("pending"), delivered: count("delivered"), failed: count("failed"), dropped: count("dropped") });
  });

  // { merchant_id, url, event?, data?, notify? }: a test notification, signed with the merchant's key,
  // sent at once unless notify delays or drops it; answers with its record and first attempt.
  on("triggerNotification", async (req, res) => {
    const deps = depsOf(res, server);
    const parsed = triggerBody.safeParse(req.body ?? {});
    if (!parsed.success) {
      const detail = issuesText(parsed.error);
      return problem(res, 400, "invalid_trigger", detail);
    }
    const { merchant_id, url, event, data, notify } = parsed.data;
    const created = await deps.store.unit(
      async (store) => {
        if (deps.config.strictMerchants && !store.records.merchant(merchant_id)) return "unknown merchant" as const;
        const queued = enqueueNotification(store.records, store.ids, store.records.nowOf(merchant_id, deps.clock.now()), {
          merchantId: merchant_id,
          url,
          event,
          data,
          notify,
        });
        await store.commit();
        return queued;
      },
      { merchant: merchant_id },
    );
    if (created === "unknown merchant") return problem(res, 404, "merchant_not_found", `no merchant ${merchant_id} (--strict-merchants is on)`);
    const notification = created && (await deps.notifier.deliver(created.notification_id));
    res.status(201).json({ notification });
  });

  on("getNotification", (req, res) => {
    const deps = depsOf(res, server);
    const notification = deps.store.records.notification(pathParam(req, "id"));
    if (!notification) return problem(res, 404, "notification_not_found", `no notification ${pathParam(req, "id")}`);
    res.json({ notification });
  });

  // Delivers it again now, whatever its state; the new attempt is recorded.
  on("resendNotification", async (req, res) => {
    const deps = depsOf(res, server);
    const notification = await deps.notifier.resend(pathParam(req, "id"));
    if (!notification) return problem(res, 404, "notification_not_found", `no notification ${pathParam(req, "id")}`);
    res.json({ notification });
  });
}

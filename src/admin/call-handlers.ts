// Each operator call's handler, by the call's operationId in the table (api/operator-calls.ts): the
// modules of admin/ hand theirs over with on(id, ...handlers), and operator.ts mounts each call with
// its scope and body check in front. An id the table does not have is a type error; a call of the
// table with no handler stops createApp (test/operator-table.test.ts).
import type { RequestHandler } from "express";
import type { OperatorCallId } from "../api/operator-calls.js";
import { SANDBOX_PATH } from "../base/paths.js";

/** Hands over a call's handler (after any middleware of its own: a gate, a body reader). */
export type On = (id: OperatorCallId, ...handlers: RequestHandler[]) => void;

/** A collector: on() to fill it, handlersOf() to read each call's. */
export function callHandlers(): { on: On; handlersOf: (id: OperatorCallId) => RequestHandler[]; ids: () => OperatorCallId[] } {
  const byId = new Map<OperatorCallId, RequestHandler[]>();
  return {
    on: (id, ...handlers) => {
      if (byId.has(id)) throw new Error(`operator call ${id} has two handlers`);
      byId.set(id, handlers);
    },
    handlersOf: (id) => {
      const handlers = byId.get(id);
      if (!handlers) throw new Error(`operator call ${id} (api/operator-calls.ts) has no handler: add one with on("${id}", ...) in src/admin/`);
      return handlers;
    },
    ids: () => [...byId.keys()],
  };
}

/** The Express path of a table path: /__sandbox/payments/{transaction_id}/complete → /payments/:transaction_id/complete (routers are mounted at /__sandbox). */
export const routePathOf = (path: string) => (path.startsWith(SANDBOX_PATH) ? path.slice(SANDBOX_PATH.length) : path).replace(/\{(\w+)\}/g, ":$1");

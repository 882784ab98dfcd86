// The gateway's eleven operations, declared once: name, path, the format it answers in, and a
// batch's order list and limit. The handlers (gateway/), the server's routes, replay and verify,
// the recorder's refusals, the scenario schema and the SignedOperation type all read this table;
// the fields each one signs are data/signature-fields.json's entry under the same name (signature.ts
// checks it at start). A new operation is a row here, its signed fields there, and its handler.
/** What an operation answers in: XML (authorise), an HTML page (checkout), JSON (the rest). */
export type Format = "xml" | "json" | "html";

export interface GatewayOperation {
  path: string;
  format: Format;
  /** a batch operation's order list (capture_orders, ...) and the most orders one request takes */
  batch?: { field: string; limit: number };
  /** query operations are usable only from the merchant's registered IP addresses */
  registeredIpOnly?: boolean;
}

/** Where every gateway path begins: a request under it that is no operation's is still the gateway's (answered in JSON). */
export const GATEWAY_PREFIX = "/v1/";

export const GATEWAY_OPERATIONS = {
  authorise: { path: "/v1/authorise", format: "xml" },
  retrievalTrans: { path: "/v1/retrievalTrans", format: "json", registeredIpOnly: true },
  checkout: { path: "/v1/checkout", format: "html" },
  capture: { path: "/v1/capture", format: "json", batch: { field: "capture_orders", limit: 50 } },
  review: { path: "/v1/review", format: "json", batch: { field: "review_orders", limit: 100 } },
  cancel: { path: "/v1/cancel", format: "json", batch: { field: "cancel_orders", limit: 50 } },
  refund: { path: "/v1/refund", format: "json", batch: { field: "refund_orders", limit: 50 } },
  retrievalRefund: { path: "/v1/retrievalRefund", format: "json" },
  subscriptionCancel: { path: "/v1/subscription/cancel", format: "json" },
  paymentMethodsOptimise: { path: "/v1/paymentMethods/optimise", format: "json" },
  payout: { path: "/v1/payout", format: "json" },
} as const satisfies Record<string, GatewayOperation>;

export type SignedOperation = keyof typeof GATEWAY_OPERATIONS;
/** the operations that take a batch of orders */
export type BatchOperationName = { [N in SignedOperation]: (typeof GATEWAY_OPERATIONS)[N] extends { batch: object } ? N : never }[SignedOperation];

export const GATEWAY_OPERATION_NAMES = Object.keys(GATEWAY_OPERATIONS) as SignedOperation[];

const BY_PATH = new Map<string, SignedOperation>(GATEWAY_OPERATION_NAMES.map((name) => [GATEWAY_OPERATIONS[name].path.toLowerCase(), name]));

/** The operation at a request path (without its query), matched as the server routes it: any case, one trailing slash allowed. */
export function operationAt(path: string): SignedOperation | undefined {
  const bare = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  return BY_PATH.get(bare.toLowerCase());
}

/** The row of an operation with its name, for a handler to spread into its own declaration. */
export const gatewayOperation = <N extends SignedOperation>(name: N) => ({ name, ...GATEWAY_OPERATIONS[name] });

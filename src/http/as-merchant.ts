// A gateway request Sandgate makes itself, as a merchant's server would send it: the JSON body
// signed with the merchant's key (encryption_data over the operation's fields) and run through the
// core, attributed to whoever made it (the merchant portal, the dashboard's playground).
import type { Deps } from "../deps/deps.js";
import { signatureOf } from "../domain/signature.js";
import type { RequestSource } from "../domain/types.js";
import { runOperation, signedFields, type GatewayAnswer, type Operation } from "./operation.js";

export interface SentAs {
  key: string;
  /** lower-case names; host and content-type are the caller's to give */
  headers: Record<string, string>;
  clientAddress: string;
  via: RequestSource;
}

/** Signs `body` (adding its encryption_data) and answers it as the gateway answers any client. */
export function runAsMerchant(operation: Operation, body: Record<string, unknown>, sent: SentAs, deps: Deps): Promise<GatewayAnswer> {
  body.encryption_data = signatureOf(signedFields(operation, body, deps.config.batchSignature), body, sent.key);
  const input = {
    url: operation.path,
    headers: sent.headers,
    rawHeaders: Object.entries(sent.headers).flat(),
    body: Buffer.from(JSON.stringify(body)),
    clientAddress: sent.clientAddress,
    via: sent.via,
  };
  return runOperation(operation, input, deps);
}

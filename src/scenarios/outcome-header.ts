// X-Sandbox-Outcome: <name> on one gateway request names its outcome from the catalogue
// (data/outcomes.json), the quickest path for a test that needs one decline: no scenario to write.
// It is the strongest choice (above X-Sandbox-Scenario, the merchant's bound scenario and the global
// scenario): no rule is looked at. Each operation takes the outcomes its request can end in; one
// without outcomes (queries, subscription cancel, payment methods) refuses the header instead of
// ignoring it, so a test that believes it forced something learns at once that it did not.
import { GatewayError } from "../domain/codes.js";
import { catalogue, type PaymentOutcome } from "../domain/outcomes.js";
import { stageOutcomes } from "../domain/completion.js";

export const OUTCOME_HEADER = "X-Sandbox-Outcome";

/** Ends a payment's own request can have: approved, declined or held at once (cancelling is the payer's, at a page). */
const atOnce = (o: PaymentOutcome) => o.state === "approved" || o.state === "declined" || o.state === "review";
const authoriseNames = (fits: (o: PaymentOutcome) => boolean) =>
  Object.entries(catalogue.authorise)
    .filter(([, o]) => fits(o))
    .map(([name]) => name);
const namesOf = (section: Record<string, unknown>) => Object.keys(section).filter((name) => !name.startsWith("$"));

/** The names per operation, as scenario rules name operations (made once: every request with the header looks its name up). */
const OUTCOMES: Record<string, readonly string[]> = {
  // a direct payment may also wait at its 3-D Secure challenge
  authorise: authoriseNames((o) => atOnce(o) || o.threeds === "challenge"),
  // an APM payment has no 3-D Secure; it may wait at its APM page
  apm: authoriseNames((o) => o.threeds === "none" && (atOnce(o) || o.result === "pending_apm")),
  // the checkout keeps the choice for the card the payer enters at the hosted checkout: what that page takes
  checkout: stageOutcomes("checkout").filter((name) => Object.hasOwn(catalogue.authorise, name)),
  capture: namesOf(catalogue.capture),
  cancel: namesOf(catalogue.cancel),
  review: namesOf(catalogue.review),
  refund: namesOf(catalogue.refund),
  payout: namesOf(catalogue.payout_outcomes),
};

/** The outcome names X-Sandbox-Outcome takes for an operation (operation as scenario rules name it); none for the others. */
export function requestOutcomes(operation: string): readonly string[] {
  return Object.hasOwn(OUTCOMES, operation) ? OUTCOMES[operation]! : [];
}

/** /v1/authorise serves two operations of the scenario rules: a direct and an APM payment. */
const SERVED_AS: Record<string, readonly string[]> = { authorise: ["authorise", "apm"] };

/** The names a gateway operation (by its signed name) takes, for the OpenAPI document. */
export function operationOutcomes(name: string): string[] {
  return [...new Set((SERVED_AS[name] ?? [name]).flatMap(requestOutcomes))];
}

/** Refuses (400) a name the operation does not have, listing those it has, before anything changes. */
export function checkRequestOutcome(operation: string, name: string): void {
  const offered = requestOutcomes(operation);
  if (offered.length === 0) {
    throw new GatewayError("no_outcomes", `${operation}: send ${OUTCOME_HEADER} with a payment, capture, review, cancel, refund or payout`);
  }
  if (!offered.includes(name)) throw new GatewayError("unknown_outcome", `"${name}" is not an outcome of ${operation} (have: ${offered.join(", ")})`);
}

/** How X-Sandbox-Rule, the request log and a payment's history name the header's decision. */
export const outcomeRule = (name: string) => `header/${OUTCOME_HEADER}: ${name}`;

// The shape of an operator call: one entry of the table (src/api/operator-calls.ts), which the
// router, the OpenAPI document, the typed client, ctl and the dashboard's forms are made from.
import type { z } from "zod";
import type { RouteScope } from "../store/store.js";

type Method = "get" | "post" | "put" | "delete";

/** Which records a call's unit of work covers: see RouteScope. */
type CallScope = RouteScope;

export interface OperatorCall {
  method: Method;
  path: string;
  operationId: string;
  scope: CallScope;
  summary: string;
  /** query parameters: name → description */
  query?: Record<string, string>;
  /** what it answers (200, or `status`) */
  answer: z.ZodType;
  status?: number;
  /** a text media type it also answers with (a string) */
  text?: string;
  /** another status with the same shape as the answer (reload: 422 with the file errors) */
  alike?: [status: number, description: string];
  /** its own refusals by status: the error codes, in words; `schema` when the body says more than { error, message } */
  problems?: Record<number, string | { description: string; schema: z.ZodType }>;
  /**
   * open: no ADMIN_TOKEN needed (health, this document); "merchant key": none either, the call
   * proves a merchant's key instead with the listen headers (sandgate listen: notify/listen-auth.ts)
   */
  open?: true | "merchant key";
  /**
   * The body: a JSON object this schema checks (a key it does not know is refused before the call
   * runs; malformed JSON is a 400 malformed_body), or "raw" (the call reads its own: verify's HAR,
   * an imported state file). None: a call
   * that changes something refuses any body with a key.
   */
  body?: z.ZodType | "raw";
  /**
   * The dashboard's form that makes this call (its /ui/ twin): posted form fields, answered with a
   * redirect back and a message; mounted by dashboard/dashboard.ts with the call's scope.
   */
  form?: string;
}

/** Runs outside a unit of work before its handler: answers no 503 store_unavailable before it starts. */
export const outsideUnits = (call: Pick<OperatorCall, "scope">) => call.scope === "none" || call.scope === "own";

export const MALFORMED = "malformed_body (the body is not valid JSON)";

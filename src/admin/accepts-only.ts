// Express, for one operator call: a body with a key the call does not accept is refused with 400 and
// the keys it accepts, before the call reads it (and so before anything changes). The table of calls
// (api/operator-calls.ts) says which body each call takes.
import { problem } from "../http/problem.js";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { z } from "zod";

/** The keys a body schema accepts (every option's, for a union). */
export function keysOf(schema: z.ZodType): string[] {
  if (schema instanceof z.ZodObject) return Object.keys(schema.shape);
  if (schema instanceof z.ZodUnion) return [...new Set((schema.options as z.ZodType[]).flatMap(keysOf))];
  return [];
}

const refuse = (res: Response, error: string, message: string) => problem(res, 400, error, message);

/**
 * Express, for one call: a body that is not a JSON object, or has a key the call does not accept,
 * is refused with 400 and the keys it accepts, before the call reads it (and so before anything changes).
 */
export function acceptsOnly(schema: z.ZodType | undefined): RequestHandler {
  const keys = schema ? keysOf(schema) : [];
  const accepted = keys.length ? `this call accepts ${keys.map((k) => `"${k}"`).join(", ")}` : "this call takes no body";
  return (req: Request, res: Response, next: NextFunction) => {
    const body: unknown = req.body;
    if (body === undefined) return next();
    if (body === null || typeof body !== "object" || Array.isArray(body)) return refuse(res, "malformed_body", `the body must be a JSON object: ${accepted}`);
    const unknown = Object.keys(body).filter((k) => !keys.includes(k));
    if (unknown.length)
      return refuse(res, "unknown_field", `unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `"${k}"`).join(", ")}: ${accepted}`);
    next();
  };
}

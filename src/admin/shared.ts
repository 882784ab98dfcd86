// What every /__sandbox router needs: the error shape and query filters.
import type { Request, Response } from "express";
import { problem } from "../http/problem.js";
import type { Done } from "./actions.js";

export { problem };

/** An action's outcome as JSON: `view` of what it changed, or its problem. */
export function answerJson<T>(res: Response, done: Done<T>, view: (value: T) => unknown): void {
  if ("problem" in done) problem(res, done.problem.status, done.problem.error, done.problem.message, done.problem.about);
  else res.json(view(done.value));
}

/** A query parameter as text; absent, empty or repeated counts as not given. */
export const queryText = (req: Request, name: string): string | undefined => {
  const value = req.query[name];
  return typeof value === "string" && value !== "" ? value : undefined;
};

/** The records whose fields equal every one of these query parameters that was given. */
export function whereQuery<T extends object>(req: Request, records: readonly T[], fields: readonly (keyof T & string)[]): T[] {
  const wanted = fields.map((f) => [f, queryText(req, f)] as const).filter(([, v]) => v !== undefined);
  return records.filter((r) => wanted.every(([f, v]) => r[f] === v));
}

/** A path parameter of the call's route ({transaction_id}, {id}, ...), as text. */
export const pathParam = (req: Request, name: string): string => {
  const value = req.params[name];
  return typeof value === "string" ? value : "";
};

/** A body schema's refusal in words: each issue as "<path> <message>", "body" for the whole. */
export const issuesText = (error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string =>
  error.issues.map((i) => `${i.path.map(String).join(".") || "body"} ${i.message}`).join("; ");

// The operator API's one error format, made here and nowhere else: `{ error, message }` JSON (a few
// add what they are about, e.g. where a payment stands), with the call's status. The gateway's
// surface refuses in each operation's own format (refusal.ts); pages answer a page (problemPage).
import type { Response } from "express";

export function problem(res: Response, status: number, error: string, message: string, about: Record<string, unknown> = {}): void {
  res.status(status).json({ error, message, ...about });
}

// What went wrong in a `sandgate ctl` command, as the one line it prints and the exit code it ends
// with: bad input refused here (2), or the sandbox answering an error, not answering in time or not
// being reachable at all (3).
import { SandgateAdminError } from "../api/client.js";

/** Bad input found before anything is sent (or a file that cannot be written): exit 2. */
export class Refused extends Error {}

export interface Failure {
  /** the API's error code, or "unreachable", "timeout" */
  error: string;
  /** the HTTP status the sandbox answered, 0 when it did not answer */
  status: number;
  message: string;
}

/** The network error's own code (ECONNREFUSED, ENOTFOUND, ...) behind fetch's "fetch failed". */
function networkCode(err: Error): string {
  const cause = (err as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
  return cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? err.message;
}

/** Why a call to the Sandgate at `url` failed, told for the person who runs the command. */
export function failureOf(err: unknown, url: string, tokenSent: boolean, timeout: string): Failure {
  if (err instanceof SandgateAdminError) {
    if (err.status === 401) {
      const message = tokenSent
        ? `the Sandgate at ${url} refused the token (401 ${err.error}): pass its ADMIN_TOKEN`
        : `the Sandgate at ${url} requires its ADMIN_TOKEN (401 ${err.error}): pass --token <token> or set ADMIN_TOKEN`;
      return { error: err.error, status: 401, message };
    }
    return { error: err.error, status: err.status, message: `the Sandgate at ${url} answered ${err.message}` };
  }
  if (err instanceof Error && err.name === "TimeoutError")
    return { error: "timeout", status: 0, message: `no answer from the Sandgate at ${url} within ${timeout}` };
  if (err instanceof Error) return { error: "unreachable", status: 0, message: `cannot reach the Sandgate at ${url}: ${networkCode(err)}` };
  return { error: "unreachable", status: 0, message: `cannot reach the Sandgate at ${url}: ${String(err)}` };
}

/** One line, whatever the message holds. */
export const oneLine = (text: string) => text.replace(/\s*[\r\n]+\s*/g, " ").trim();

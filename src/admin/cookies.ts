// Reading a cookie of the request (Sandgate sets two: the admin session's and the form token's).
import type { Request } from "express";

/** The cookie's value, or undefined when absent or not decodable. */
export function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) {
      try {
        return decodeURIComponent(part.slice(at + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

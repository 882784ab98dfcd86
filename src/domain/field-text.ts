// How the gateway reads a field's value as text: what signatures sign, what refusals echo, what
// the domain stores. One rule, below every layer that reads a body.

/** A body value as text: "" for missing, numbers stringified, objects as JSON. */
export function text(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

// Amounts are decimal strings with two places on the wire and integer cents inside.
export function toCents(amount: string): number {
  const [whole = "0", frac = ""] = amount.split(".");
  return Number(whole) * 100 + Number(frac.padEnd(2, "0").slice(0, 2));
}

export function fromCents(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

/** "10" → "10.00", "10.5" → "10.50" */
export const formatAmount = (amount: string): string => fromCents(toCents(amount));

// Amounts are decimal strings with two places on the wire and integer cents inside.
export function toCents(amount: string): number {
  // what amount.split(".") gave, without the array (a 50-order capture reads ~150 amounts)
  const dot = amount.indexOf(".");
  if (dot < 0) return Number(amount) * 100 + 0; // + 0: "-0" is 0 cents, not -0
  const next = amount.indexOf(".", dot + 1);
  const frac = amount.slice(dot + 1, next < 0 ? undefined : next);
  return Number(amount.slice(0, dot)) * 100 + Number(frac.padEnd(2, "0").slice(0, 2));
}

export function fromCents(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

/** "10" → "10.00", "10.5" → "10.50" */
export const formatAmount = (amount: string): string => fromCents(toCents(amount));

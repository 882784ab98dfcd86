// Amounts: decimal strings with two places on the wire, integer cents inside.

export function toCents(amount: string): number {
  // digits, a dot and two digits (every stored amount, and most sent), up to 11 digits: read digit
  // by digit, without the slices and the string-to-number calls of the general case below (a
  // 50-order capture reads several per order)
  const n = amount.length;
  if (n >= 4 && n <= 12 && amount.charCodeAt(n - 3) === 46) {
    let cents = 0;
    for (let i = 0; i < n; i++) {
      if (i === n - 3) continue;
      const digit = amount.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) return splitCents(amount);
      cents = cents * 10 + digit;
    }
    return cents;
  }
  return splitCents(amount);
}

/** what amount.split(".") gave, without the array, for any string */
function splitCents(amount: string): number {
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

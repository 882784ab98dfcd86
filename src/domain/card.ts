// Card numbers: Luhn check, masking (first six, last four), expiry.
export function passesLuhn(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = number.charCodeAt(number.length - 1 - i) - 48;
    if (digit < 0 || digit > 9) return false;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

export function maskCard(number: string): string {
  if (number.length < 11) return "*".repeat(number.length);
  return `${number.slice(0, 6)}${"*".repeat(number.length - 10)}${number.slice(-4)}`;
}

/** Normalises "7"/"07" and "30"/"2030"; a card is valid through the last day of its month. */
export function normaliseExpiry(month: string, year: string): { month: string; year: string } {
  return { month: month.padStart(2, "0"), year: year.length === 2 ? `20${year}` : year };
}

export function isExpired(month: string, year: string, now: Date): boolean {
  const endOfMonth = Date.UTC(Number(year), Number(month), 1); // first instant of the next month
  return now.getTime() >= endOfMonth;
}

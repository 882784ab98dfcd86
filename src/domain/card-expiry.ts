// A card's expiry: the month and year as the gateway reads them, and whether it has passed.

/** Normalises "7"/"07" and "30"/"2030"; a card is valid through the last day of its month. */
export function normaliseExpiry(month: string, year: string): { month: string; year: string } {
  return { month: month.padStart(2, "0"), year: year.length === 2 ? `20${year}` : year };
}

/** A card is valid through the last day of its month: expired from the first instant of the next. */
export function isExpired(month: string, year: string, now: Date): boolean {
  const endOfMonth = Date.UTC(Number(year), Number(month), 1); // first instant of the next month
  return now.getTime() >= endOfMonth;
}

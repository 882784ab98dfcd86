// A card number's own facts: whether it passes the Luhn check, and how it is shown (its first six
// and last four digits), wherever Sandgate keeps or shows one.

/** The Luhn check (mod 10) of a string of digits; anything but digits fails it. */
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

/** The number as its first six and last four digits, stars between (a short one: all stars). */
export function maskCard(number: string): string {
  if (number.length < 11) return "*".repeat(number.length);
  return `${number.slice(0, 6)}${"*".repeat(number.length - 10)}${number.slice(-4)}`;
}

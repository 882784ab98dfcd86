// One copy of each text that many records repeat (merchant and account ids, currencies, amounts,
// masked cards, history lines): 100,000 payments then hold 100,000 references, not 100,000
// copies. Bounded: once the pool is full, new texts are kept as they come.
const texts = new Map<string, string>();
const INTERN_LIMIT = 10_000;

export function intern(text: string): string {
  const known = texts.get(text);
  if (known !== undefined) return known;
  if (texts.size < INTERN_LIMIT) texts.set(text, text);
  return text;
}

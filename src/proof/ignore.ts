// --ignore paths: `respon.risk_score`, `orders_list[*].transaction_date`, `form.inputs.*`, or a bare
// field name (`risk_score`) that matches that field wherever it is. A path also covers what is under it.

export function ignoreMatcher(patterns: readonly string[]): (path: string) => boolean {
  if (!patterns.length) return () => false;
  const res = patterns.map((p) => {
    const bare = !/[.[]/.test(p);
    const body = p
      .split(/(\[\*\]|\*)/)
      .map((part) => (part === "[*]" ? "\\[\\d+\\]" : part === "*" ? "[^.[\\]]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("");
    return new RegExp(`${bare ? "(^|\\.)" : "^"}${body}(\\[\\d+\\])?($|[.[])`);
  });
  return (path) => res.some((re) => re.test(path));
}

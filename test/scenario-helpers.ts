// A scenarios folder of one's own for a test: the shipped files plus extra ones.
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const SHIPPED = resolve(import.meta.dirname, "..", "scenarios");

export function scenarioDir(extra: Record<string, string | object> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-scenarios-"));
  cpSync(SHIPPED, dir, { recursive: true });
  for (const [file, content] of Object.entries(extra)) writeFileSync(join(dir, file), typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return dir;
}

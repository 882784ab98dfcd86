// Where Sandgate's own files live, whether it runs from src/ (tsx, vitest) or dist/ (npm start, npx).
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** the nearest folder above this module with a package.json: the same from src/base/, dist/base/ and the bundled dist/sandgate.js */
const rootAbove = (dir: string): string => (existsSync(resolve(dir, "package.json")) || dirname(dir) === dir ? dir : rootAbove(dirname(dir)));
export const packageRoot = rootAbove(dirname(fileURLToPath(import.meta.url)));
let version: string | undefined;
/** package.json's version (read once, when first asked: --version, the OpenAPI document, the HAR export's creator) */
export const packageVersion = (): string =>
  (version ??= (JSON.parse(readFileSync(resolve(packageRoot, "package.json"), "utf8")) as { version: string }).version);
export const dataDir = resolve(packageRoot, "data");
/** the stylesheet and script of the payer pages and the dashboard */
export const assetsDir = resolve(packageRoot, "assets");
export const defaultFixturesDir = resolve(packageRoot, "fixtures");
export const defaultScenariosDir = resolve(packageRoot, "scenarios");

/**
 * Where Sandgate's own surfaces are mounted: the operator API, the dashboard and its assets. The
 * operator-call table (api/operator-calls.ts) writes every call's path under it; nothing else
 * writes a path beginning with it (`npm run lint`).
 */
export const SANDBOX_PATH = "/__sandbox";

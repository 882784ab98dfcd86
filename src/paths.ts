// Where Sandgate's own files live, whether it runs from src/ (tsx, vitest) or dist/ (npm start, npx).
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const dataDir = resolve(packageRoot, "data");
/** the stylesheet and script of the payer pages and the dashboard */
export const assetsDir = resolve(packageRoot, "assets");
export const defaultFixturesDir = resolve(packageRoot, "fixtures");
export const defaultScenariosDir = resolve(packageRoot, "scenarios");

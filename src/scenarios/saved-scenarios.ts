// Where the scenarios saved from the dashboard's editor are kept when no --scenarios folder of the
// merchant's own can take them: with --data, in a file beside it (<data>.scenarios.json), written
// whole or not at all, so they come back after a restart.
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { writeWhole } from "../base/write-whole.js";
import { resolve } from "node:path";
import { defaultScenariosDir } from "../base/paths.js";

/** The scenarios saved beside a --data file, name → text (none yet: {}); a file that cannot be read is an error at start. */
export function readSavedScenarios(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  const saved = JSON.parse(readFileSync(file, "utf8")) as { scenarios?: Record<string, unknown> };
  return Object.fromEntries(Object.entries(saved.scenarios ?? {}).filter((e): e is [string, string] => typeof e[1] === "string"));
}

export function writeSavedScenarios(file: string, own: Record<string, string>): void {
  writeWhole(file, JSON.stringify({ scenarios: own }, null, 1));
}

/** A --scenarios folder the editor may save into: the merchant's own (not the shipped one) and writable by this process. */
export function writableOwnFolder(dir: string): boolean {
  if (resolve(dir) === resolve(defaultScenariosDir)) return false;
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

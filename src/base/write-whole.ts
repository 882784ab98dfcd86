// A file written whole or not at all: the text goes to <file>.saving, which is then renamed over
// the file, so a reader (a scenario reload, the next start) never sees half of it.
import { renameSync, writeFileSync } from "node:fs";

export function writeWhole(file: string, text: string): void {
  writeFileSync(`${file}.saving`, text);
  renameSync(`${file}.saving`, file);
}

// Writes scenarios/scenario.schema.json from src/scenarios/schema.ts: `npm run schema`.
// test/scenario-schema.test.ts fails when the committed file is out of date.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { scenarioSchemaJson } from "../src/scenarios/json-schema.js";

const file = resolve(import.meta.dirname, "..", "scenarios", "scenario.schema.json");
writeFileSync(file, scenarioSchemaJson());
process.stdout.write(`wrote ${file}\n`);

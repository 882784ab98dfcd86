/* global module */
// The house's layers, lowest first. A file may import from its own layer and from the layers listed
// before its own, never from one listed after it; no import circle, type-only and dynamic imports
// included; and no file of src/ outside a layer. `npm run lint` checks it (dependency-cruiser), and
// test/layers.test.ts shows each rule catching what it forbids. docs/architecture.md draws the layers.
/**
 * [unit, what it holds]: a unit is a folder of src/ with its subfolders, or one of the two entry
 * points at src/'s top (index.ts, testcontainers.ts, main.ts). A file no unit names (a loose file at the top, a new
 * folder) fails `npm run lint`: see "in-a-layer" below.
 */
const LAYERS = [
  ["base", "the package's folders, a semaphore, escaping and the XML writer"],
  ["config", "the settings table, the notify_url allow-list, warnings about exposure"],
  ["domain", "result codes, the clock, seeded ids, encryption_data, and records with the rules on them: payments, transitions, money, cards, masking"],
  ["scenarios", "scenario files, conditions, the registry that decides"],
  ["render", "HTML pages and the answer elements of a record"],
  ["verify-report", "verify's options and report: what the server reads of proof/"],
  ["store", "memory, --data and Redis; the request log"],
  ["notify", "notifications: outbox, dispatcher, events"],
  ["deps", "what every part of the server is handed"],
  ["schedule", "what falls due on the clock (the catch-up), subscription deductions"],
  ["receiver-check", "probing a merchant's notification receiver"],
  ["http", "the gateway's core on plain data, its node:http adapter, body and field parsing"],
  ["api", "the API described: the operator-call table, bodies and answers as schemas, the OpenAPI document, the typed client"],
  ["gateway", "one file per gateway operation"],
  ["pages", "payer pages"],
  ["admin", "the operator API's handlers"],
  ["dashboard", "the dashboard: its views, forms, routes and the playground"],
  ["server", "createApp, the operator router, startSandbox"],
  ["proof", "record and verify (verify runs in a worker: the server never imports proof/)"],
  ["index", "the package's exports"],
  ["testcontainers", "the image as a Testcontainers container (sandgate/testcontainers)"],
  ["cli", "the command line"],
  ["main", "the process"],
];

const ENTRY_POINTS = ["index", "testcontainers", "main"];
/** The files of a unit: a folder with its subfolders, or an entry point at src/'s top. */
const pathOf = (unit) => (ENTRY_POINTS.includes(unit) ? `^src/${unit}\\.ts$` : `^src/${unit}/`);
const ANY_LAYER = LAYERS.map(([unit]) => pathOf(unit));

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "an import circle, type-only and dynamic imports included",
      from: {},
      to: { circular: true },
    },
    ...LAYERS.slice(0, -1).map(([unit], i) => ({
      name: `layer-${unit}`,
      severity: "error",
      comment: `${unit} may import only from itself and the layers listed before it in .dependency-cruiser.cjs`,
      from: { path: pathOf(unit) },
      to: { path: LAYERS.slice(i + 1).map(([above]) => pathOf(above)) },
    })),
    {
      name: "in-a-layer",
      severity: "error",
      comment:
        "a file of src/ that no layer names: a loose file beside the entry points (index.ts, testcontainers.ts, main.ts), or a folder missing from LAYERS (knip catches one nothing imports)",
      from: { path: "^src/", pathNot: ANY_LAYER },
      to: {},
    },
    {
      name: "imports-a-file-in-no-layer",
      severity: "error",
      comment: "an import of a file of src/ that no layer names",
      from: {},
      to: { path: "^src/", pathNot: ANY_LAYER },
    },
  ],
  options: {
    includeOnly: "^src/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};

// what test/layers.test.ts reads: each unit with the pattern of its files (dependency-cruiser reads only the above)
Object.defineProperty(module.exports, "layers", { value: LAYERS.map(([unit, holds]) => ({ unit, holds, path: pathOf(unit) })), enumerable: false });

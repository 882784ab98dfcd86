/* global module */
// The house's layers, lowest first. A file may import from its own folder and from the folders (or
// top-level files) listed before its own, never from one listed after it; and no import circle,
// type-only and dynamic imports included. `npm run lint` checks it (dependency-cruiser), and so does
// test/layers.test.ts, which also fails when a source file is in no layer. docs/architecture.md
// draws the layers.
/** [unit, what it holds]: a unit is a folder of src/ (its files, not its subfolders) or a file at src/'s top. */
const LAYERS = [
  ["paths", "where the package's folders are"],
  ["clock", "the sandbox clock"],
  ["ids", "seeded ids"],
  ["slots", "a semaphore"],
  ["text-ring", "texts in a byte ring"],
  ["heap-growth", "V8 flags"],
  ["notify-allow-list", "which notify_url hosts may be reached"],
  ["codes", "result codes and GatewayError"],
  ["config", "the settings table"],
  ["exposure", "warnings about how the server is exposed"],
  ["domain", "records and the rules on them: payments, transitions, money, cards, masking"],
  ["signature", "encryption_data"],
  ["scenarios", "scenario files, conditions, the registry that decides"],
  ["render", "XML, HTML and the answer elements of a record"],
  ["request-log", "the request log"],
  ["verify-report", "verify's options and report: what the server reads of proof/"],
  ["store", "memory, --data and Redis"],
  ["render/dashboard", "the dashboard's pages"],
  ["notify", "notifications: outbox, dispatcher, events"],
  ["deps", "what every part of the server is handed"],
  ["schedule", "what falls due on the clock (the catch-up), subscription deductions"],
  ["receiver-check", "probing a merchant's notification receiver"],
  ["http", "the gateway's core on plain data, its node:http adapter, body and field parsing"],
  ["api", "the API described: the operator-call table, bodies and answers as schemas, the OpenAPI document"],
  ["client", "the typed operator client"],
  ["gateway", "one file per gateway operation"],
  ["pages", "payer pages"],
  ["admin", "the operator API and the dashboard's routes"],
  ["app", "createApp: wires HTTP"],
  ["sandbox", "startSandbox"],
  ["proof", "record and verify (verify runs in a worker: the server never imports proof/)"],
  ["index", "the package's exports"],
  ["cli", "the command line"],
  ["main", "the process"],
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** The files of a unit: a folder's own files, or the one top-level file. */
const pathOf = (unit) =>
  [
    "paths",
    "clock",
    "ids",
    "slots",
    "text-ring",
    "heap-growth",
    "notify-allow-list",
    "codes",
    "config",
    "exposure",
    "request-log",
    "verify-report",
    "deps",
    "client",
    "app",
    "sandbox",
    "index",
    "main",
  ].includes(unit)
    ? `^src/${escape(unit)}\\.ts$`
    : `^src/${escape(unit)}/[^/]+\\.ts$`;

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

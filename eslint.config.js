// Lint rules: typescript-eslint's recommended set over src/ and test/.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const GATEWAY_PATH = {
  selector: "Literal[value=/^\\/v1\\//], TemplateElement[value.raw=/^\\/v1\\//]",
  message: "a gateway path is declared once, in src/domain/gateway-operations.ts: read it from GATEWAY_OPERATIONS",
};
const OPERATOR_PATH = {
  selector: "Literal[value=/^\\/__sandbox(\\/|$)/], TemplateElement[value.raw=/^\\/__sandbox(\\/|$)/]",
  message:
    "an operator path is declared once, in the operator-call table (src/api/calls/*.ts): read it from the table (callPath, formPath) or SANDBOX_PATH (src/base/paths.ts)",
};
/** The files that declare paths, and the paths each may write: every other file in src/ may write none. */
const PATH_TABLES = {
  "src/domain/gateway-operations.ts": GATEWAY_PATH,
  "src/api/calls/*.ts": OPERATOR_PATH,
  "src/base/paths.ts": OPERATOR_PATH,
};

function pathRules() {
  const tables = Object.keys(PATH_TABLES);
  const rule = (except) => ["error", ...[GATEWAY_PATH, OPERATOR_PATH].filter((r) => r !== except)];
  return [
    { files: ["src/**/*.ts"], ignores: tables, rules: { "no-restricted-syntax": rule(undefined) } },
    ...tables.map((table) => ({ files: [table], rules: { "no-restricted-syntax": rule(PATH_TABLES[table]) } })),
  ];
}

export default tseslint.config(
  { ignores: ["dist/", "dist.building-*/", "dist.old-*/", "node_modules/", "coverage/", ".docs-snippets-*/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly" } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "error",
      eqeqeq: ["error", "smart"],
    },
  },
  // One declaration per surface: a gateway path is written only in the operations' catalogue, an
  // operator path (anything under /__sandbox) only in the operator-call table
  ...pathRules(),
  // small rooms: a source file that grows past 400 lines is split by what it holds
  { files: ["src/**/*.ts"], rules: { "max-lines": ["error", { max: 400 }] } },
  // the dashboard's browser script: plain ES2017 in the page, no build step
  {
    files: ["assets/**/*.js"],
    languageOptions: {
      sourceType: "script",
      globals: { document: "readonly", window: "readonly", fetch: "readonly", setTimeout: "readonly", encodeURIComponent: "readonly" },
    },
  },
);

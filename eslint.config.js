// Lint rules: typescript-eslint's recommended set over src/ and test/.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

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
  // the dashboard's browser script: plain ES2017 in the page, no build step
  {
    files: ["assets/**/*.js"],
    languageOptions: {
      sourceType: "script",
      globals: { document: "readonly", window: "readonly", fetch: "readonly", setTimeout: "readonly", encodeURIComponent: "readonly" },
    },
  },
);

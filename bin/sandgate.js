#!/usr/bin/env node
// `npx sandgate`: runs the compiled server (dist/ is built by `npm run build`, also on install).
import "../dist/main.js";

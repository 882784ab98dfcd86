#!/usr/bin/env node
// `npx sandgate`: runs the server as one bundled file (dist/sandgate.js, built by `npm run build`).
import "../dist/sandgate.js";

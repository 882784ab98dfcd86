#!/usr/bin/env node
// `npx sandgate`: runs the server as one bundled file (dist/sandgate.js, built by `npm run build`);
// `npx sandgate ctl …` runs the operator client's own, smaller bundle (dist/ctl.js): no server to load.
await import(process.argv[2] === "ctl" ? "../dist/ctl.js" : "../dist/sandgate.js");

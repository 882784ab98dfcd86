// The bench's lowest floor: Node's own HTTP server and nothing else (no framework, no body parser):
// it reads the whole body, then answers each POST with a canned body of the size and type the load
// generator names in x-floor-bytes / x-floor-type, as floor.mjs does. The physical limit of a Node
// server sending the same bytes; Express's floor (floor.mjs) sits above it.
// Run as its own process: node scripts/bench/floor-http.mjs --port 0
import { Buffer } from "node:buffer";
import { createServer } from "node:http";

const port = Number(process.argv[process.argv.indexOf("--port") + 1] || 0);
const canned = new Map();
const server = createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    const bytes = Number(req.headers["x-floor-bytes"] || 2);
    const type = req.headers["x-floor-type"] || "application/json";
    let body = canned.get(bytes);
    if (!body) canned.set(bytes, (body = Buffer.from("x".repeat(bytes))));
    res.writeHead(200, { "content-type": type, "content-length": body.length });
    res.end(body);
  });
});
server.listen(port, "127.0.0.1", () => process.stdout.write(`floor listening on http://127.0.0.1:${server.address().port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));

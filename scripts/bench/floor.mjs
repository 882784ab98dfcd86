// The bench's floor: a plain Express 5 app doing what any HTTP service must (parse a JSON or form
// body, answer) and nothing else. It answers each POST with a canned body of the size and type the
// load generator names in x-floor-bytes / x-floor-type, so it sends as many bytes as Sandgate.
// Run as its own process, like Sandgate: node scripts/bench/floor.mjs --port 0
import express from "express";

const port = Number(process.argv[process.argv.indexOf("--port") + 1] || 0);
const app = express();
app.use(express.json({ limit: "1mb" }));
app.use(express.urlencoded({ extended: false, limit: "1mb" }));
const canned = new Map();
app.all("/{*path}", (req, res) => {
  const bytes = Number(req.get("x-floor-bytes") || 2);
  const type = req.get("x-floor-type") || "application/json";
  let body = canned.get(bytes);
  if (!body) canned.set(bytes, (body = "x".repeat(bytes)));
  res.type(type).send(body);
});
const server = app.listen(port, "127.0.0.1", () => process.stdout.write(`floor listening on http://127.0.0.1:${server.address().port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));

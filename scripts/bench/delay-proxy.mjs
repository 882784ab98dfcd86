// `node scripts/bench/delay-proxy.mjs <listen port, 0 for any> <target port> [delay ms]`
// A TCP proxy in front of Redis (127.0.0.1) that holds every chunk, in each direction, for the
// delay before passing it on, in order: each round trip through it costs 2 × delay more. Prints
// "listening on <port>" once it listens; a line "<ms>" on stdin sets a new delay (answered with
// "delay <ms>"; chunks already held keep their time, and none overtakes one ahead of it).
import { createServer, connect } from "node:net";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { setTimeout } from "node:timers";

const [listenPort = "0", targetPort, initial = "0"] = process.argv.slice(2);
if (!targetPort) throw new Error("usage: delay-proxy.mjs <listen port> <target port> [delay ms]");
let delay = Number(initial);

/** from → to: each chunk (null: the end) passed on `delay` ms after it came, after the ones before it */
function pipe(from, to) {
  const held = [];
  let timer;
  const pass = (chunk) => (chunk ? to.write(chunk) : to.end());
  const flush = () => {
    timer = undefined;
    const now = performance.now();
    while (held.length && held[0].due <= now) pass(held.shift().chunk);
    if (held.length) timer = setTimeout(flush, held[0].due - now);
  };
  const hold = (chunk) => {
    if (delay <= 0 && !held.length) return pass(chunk);
    const due = Math.max(performance.now() + delay, held.at(-1)?.due ?? 0);
    held.push({ due, chunk });
    timer ??= setTimeout(flush, due - performance.now());
  };
  from.on("data", hold);
  from.on("end", () => hold(null));
  from.on("error", () => to.destroy());
}

const server = createServer((client) => {
  const upstream = connect(Number(targetPort), "127.0.0.1");
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  pipe(client, upstream);
  pipe(upstream, client);
  client.on("close", () => upstream.destroy());
  upstream.on("close", () => client.destroy());
});
server.listen(Number(listenPort), "127.0.0.1", () => process.stdout.write(`listening on ${server.address().port}\n`));

createInterface({ input: process.stdin }).on("line", (line) => {
  delay = Number(line);
  process.stdout.write(`delay ${delay}\n`);
});
process.stdin.on("end", () => process.exit(0));
process.on("SIGTERM", () => process.exit(0));

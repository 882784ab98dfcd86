// Slow sockets for the bench's "slow sockets" scenario, in a process of their own:
// `node scripts/bench/slow-client.mjs <port> <from address> <count>` opens `count` sockets from
// `from` (a loopback address), each sending headers with Content-Length 100 and one byte of body,
// and holds them. It prints one JSON line once every socket has connected or failed and the server
// has refused all it will ({opened, refused, failed}), or after 15 s of waiting for those refusals.
import { connect } from "node:net";
import { setInterval, clearInterval, setTimeout } from "node:timers";

const [port, from, count] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4])];
let opened = 0;
let refused = 0;
let failed = 0;
let reported = false;
const report = () => {
  if (reported) return;
  reported = true;
  console.log(JSON.stringify({ opened, refused, failed }));
};
const settled = () => {
  if (opened + failed < count) return;
  const wait = () => (refused + failed >= count - 500 ? report() : setTimeout(wait, 100));
  wait();
  setTimeout(report, 15_000);
};
let started = 0;
const sockets = [];
// a hundred every 50 ms, as many clients arriving
const tick = setInterval(() => {
  for (let k = 0; k < 100 && started < count; k++, started++) {
    const socket = connect({ port, host: "127.0.0.1", localAddress: from }, () => {
      opened++;
      socket.write("POST /v1/authorise HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{");
      settled();
    });
    socket.on("data", (d) => {
      if (d.toString().startsWith("HTTP/1.1 503")) refused++;
    });
    socket.on("error", () => {
      if (!socket.connecting) return;
      failed++;
      settled();
    });
    sockets.push(socket);
  }
  if (started >= count) clearInterval(tick);
}, 50);
setInterval(() => {}, 1000);

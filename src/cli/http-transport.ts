// The operator client's calls over node:http (and https), for sandgate ctl: a CI script runs it
// dozens of times, and loading fetch's undici costs a process ~130 ms more than node:http does.
// Errors look as fetch's do to ctl-errors.ts: a TimeoutError, or the network's code in `cause`.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Transport } from "../api/client.js";

export const nodeHttpTransport: Transport = (url, { method, headers, body, timeoutMs }) =>
  new Promise((resolve, reject) => {
    const send = url.startsWith("https:") ? httpsRequest : httpRequest;
    const length = body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) };
    const req = send(url, { method, headers: { ...headers, ...length, connection: "close" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), text: Buffer.concat(chunks).toString("utf8") });
      });
      res.on("error", fail);
    });
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            const err = new Error(`no complete answer within ${timeoutMs} ms`);
            err.name = "TimeoutError";
            req.destroy(err);
          }, timeoutMs);
    function fail(err: NodeJS.ErrnoException) {
      clearTimeout(timer);
      reject(err.name === "TimeoutError" ? err : Object.assign(new Error(err.code ?? err.message), { cause: err }));
    }
    req.on("error", fail);
    req.end(body);
  });

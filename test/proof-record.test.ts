// `sandgate record` as a process in front of a real Sandgate: every operation passes through byte
// for byte, the HAR on disk is complete after every exchange and after SIGTERM, card data and
// secrets never reach it, payer pages and relayed notifications are recorded, an unreachable
// gateway gives a 502 in the operation's format and no entry, and bad flags exit 2 in one line.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { headerOf, kindOf, pathOf, readHar, type HarEntry } from "../src/proof/har.js";
import { maskUrl, maskValue } from "../src/domain/masking.js";
import { maskBody, maskHeader } from "../src/proof/masking-recorded.js";
import { spawnSandgate } from "../scripts/sandgate-process.js";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { ACME, ANY_SIGNATURE, apmPayment, directPayment, nextOrderNo, rootText } from "./helpers.js";
import { until } from "./waiting.js";

const CARD = "4242424242424242";
const MASKED_CARD = "424242******4242";

const running: ChildProcessWithoutNullStreams[] = [];
const servers: Server[] = [];
let upstream: Sandbox;

beforeEach(async () => {
  upstream = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", seed: "rec" });
});
afterEach(async () => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await upstream.close();
});

const tempHar = () => join(mkdtempSync(join(tmpdir(), "sandgate-record-")), "nested", "run.har");

/** `sandgate record …` as `npx sandgate record` runs it; resolves its URL from the line it prints. */
function record(args: string[]) {
  const proc = spawnSandgate(["record", ...args]);
  running.push(proc.child);
  return proc;
}

async function stop(proc: ReturnType<typeof record>) {
  proc.child.kill("SIGTERM");
  return proc.exited;
}

interface Reply {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
}

async function post(url: string, body: string | Buffer, contentType: string, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": contentType, ...headers }, body, redirect: "manual" });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString("utf8") };
}

const json = (fields: Record<string, unknown>) => [JSON.stringify(fields), "application/json"] as const;
const form = (fields: Record<string, unknown>) =>
  [new URLSearchParams(Object.entries(fields).map(([k, v]): [string, string] => [k, String(v)])).toString(), "application/x-www-form-urlencoded"] as const;
const envelope = { merchant_id: ACME.merchant_id, account_id: ACME.account_id, encryption_data: ANY_SIGNATURE };

/** The upstream's own record of what it answered (its HAR export), gateway operations only, oldest first. */
async function upstreamExchanges(): Promise<HarEntry[]> {
  const har = (await (await fetch(`${upstream.url}/__sandbox/requests.har`)).json()) as { log: { entries: HarEntry[] } };
  return har.log.entries.filter((e) => pathOf(e.request.url).startsWith("/v1/"));
}

const freePort = async () => {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
};

describe("sandgate record in front of Sandgate", () => {
  test("every gateway operation passes through byte for byte; the HAR is complete after each exchange and after SIGTERM", async () => {
    const out = tempHar();
    const proc = record(["--upstream", upstream.url, "--out", out, "--port", "0"]);
    const rec = await proc.url;
    expect(proc.stdout()).toBe(`Sandgate recorder listening on ${rec}, forwarding to ${upstream.url}, writing ${out}\n`);
    expect(readHar(out)).toEqual([]);

    const replies: Reply[] = [];
    const paths: string[] = [];
    const send = async (path: string, [body, type]: readonly [string, string]) => {
      const reply = await post(`${rec}${path}`, body, type);
      replies.push(reply);
      paths.push(path);
      expect(reply.status, `${path}: ${reply.text}`).toBe(200);
      // complete on disk while the recorder runs, the new exchange last
      const entries = readHar(out);
      expect(entries).toHaveLength(replies.length);
      const last = entries.at(-1)!;
      expect(last.request.url).toBe(`${upstream.url}${path}`);
      expect(kindOf(last)).toBe("gateway");
      expect(last.response.status).toBe(200);
      return reply;
    };

    const direct = directPayment({ order_no: nextOrderNo("REC") });
    const paid = await send("/v1/authorise", json(direct));
    expect(rootText(paid.text, "order_status")).toBe("1");
    const transactionId = rootText(paid.text, "transaction_id")!;
    const apm = await send("/v1/authorise", form(apmPayment()));
    expect(rootText(apm.text, "issuer_url")).toMatch(/\/pay\/apm\//);
    expect((await send("/v1/checkout", json({ ...envelope, order_no: nextOrderNo("CO"), currency: "USD", amount: "15.00" }))).text).toContain('name="theForm"');
    await send("/v1/retrievalTrans", form({ ...envelope, order_no: direct.order_no }));
    await send(
      "/v1/capture",
      json({ ...envelope, capture_orders: [{ transaction_id: transactionId, order_no: direct.order_no, currency: "USD", amount: "10.00" }] }),
    );
    await send(
      "/v1/review",
      json({
        ...envelope,
        review_orders: [{ transaction_id: "1000000000001007", order_no: "ORD-1007", currency: "USD", amount: "560.00", review_flag: "approve" }],
      }),
    );
    await send(
      "/v1/cancel",
      json({ ...envelope, cancel_orders: [{ transaction_id: "1000000000001007", order_no: "ORD-1007", currency: "USD", amount: "560.00" }] }),
    );
    await send(
      "/v1/refund",
      json({
        ...envelope,
        refund_orders: [
          { transaction_id: "1000000000001003", order_no: "ORD-1003", currency: "EUR", amount: "200.00", refund_amount: "20.00", refund_reason: "return" },
        ],
      }),
    );
    await send("/v1/retrievalRefund", form({ ...envelope, order_no: "ORD-1003" }));
    const payout = {
      ...envelope,
      request_id: randomUUID(),
      payment_currency: "EUR",
      source_currency: "USD",
      payment_amount: "920.00",
      payment_method: "SWIFT",
      fee_paid_by: "PAYER",
    };
    await send(
      "/v1/payout",
      json({
        ...payout,
        beneficiary: {
          first_name: "Ann",
          last_name: "Lee",
          entity_type: "PERSONAL",
          bank_details: { account_number: "12345678", bank_country_code: "DE", swift_code: "DEUTDEFF" },
        },
      }),
    );
    await send("/v1/subscription/cancel", json({ ...envelope, account_id: "A10002", recurring_id: "R20261009000001" }));
    await send("/v1/paymentMethods/optimise", form({ ...envelope, account_id: "A10002", currency: "BRL", amount: "100.00", billing_country: "BR" }));

    // concurrent requests: each answered, each recorded once
    const parallel = await Promise.all(
      ["10.00", "20.00", "30.00", "40.00"].map(async (amount) => {
        const [body, type] = json({ ...envelope, account_id: "A10002", currency: "BRL", amount, billing_country: "BR" });
        return post(`${rec}/v1/paymentMethods/optimise`, body, type);
      }),
    );
    replies.push(...parallel);
    paths.push(...parallel.map(() => "/v1/paymentMethods/optimise"));

    // what the client got is what Sandgate answered, byte for byte, with Sandgate's own headers
    const seen = await upstreamExchanges();
    expect(seen).toHaveLength(replies.length);
    const recorded = readHar(out);
    expect(recorded).toHaveLength(replies.length);
    const byRequestId = new Map(seen.map((e) => [headerOf(e.response.headers, "x-request-id"), e]));
    recorded.forEach((entry, i) => {
      const theirs = byRequestId.get(headerOf(entry.response.headers, "x-request-id"))!;
      expect(theirs, `entry ${i}`).toBeDefined();
      expect(entry.request.url).toBe(theirs.request.url);
      expect(entry.response.content.text).toBe(theirs.response.content.text);
      expect(entry.response.status).toBe(theirs.response.status);
    });
    replies.forEach((reply, i) => {
      const theirs = byRequestId.get(reply.headers.get("x-request-id") ?? "")!;
      expect(theirs, `reply ${i}`).toBeDefined();
      expect(pathOf(theirs.request.url)).toBe(paths[i]);
      expect(reply.bytes.equals(Buffer.from(theirs.response.content.text ?? "", "utf8"))).toBe(true);
      for (const { name, value } of theirs.response.headers) expect(reply.headers.get(name), name).toBe(value);
    });
    // the first twelve in the order they were sent (one at a time)
    expect(recorded.slice(0, 12).map((e) => pathOf(e.request.url))).toEqual(paths.slice(0, 12));
    expect(recorded.map((e) => e._sandgate?.kind)).toEqual(replies.map(() => "gateway"));

    expect(await stop(proc)).toBe(0);
    expect(proc.stdout()).toContain(`recorded ${replies.length} exchanges to ${out}\n`);
    const after = readHar(out);
    expect(after).toHaveLength(replies.length);
    const doc = JSON.parse(readFileSync(out, "utf8")) as { log: { version: string; creator: { name: string; version: string } } };
    expect(doc.log.version).toBe("1.2");
    expect(doc.log.creator).toEqual({ name: "Sandgate recorder", version: JSON.parse(readFileSync("package.json", "utf8")).version });
  });

  test("card numbers, security codes and key-named values never reach the HAR, but reach the gateway as sent", async () => {
    const out = tempHar();
    const proc = record(["--upstream", upstream.url, "--out", out, "--port", "0"]);
    const rec = await proc.url;
    const secrets = { api_key: "sk_test_NEVER_WRITTEN_8c1f", merchant_password: "hunter2-NEVER" };
    const asJson = await post(`${rec}/v1/authorise`, ...json(directPayment({ security_code: "7391", ...secrets })), {
      "x-sandbox-api-key": "hdr-NEVER-written",
    });
    const asForm = await post(`${rec}/v1/authorise?card=${CARD}`, ...form(directPayment({ security_code: "7391", ...secrets })));
    const jsonAsForm = await post(
      `${rec}/v1/authorise`,
      JSON.stringify(directPayment({ security_code: "7391", ...secrets })),
      "application/x-www-form-urlencoded",
    );
    // the gateway was given the real card: it approved each
    for (const reply of [asJson, asForm, jsonAsForm]) expect(rootText(reply.text, "order_status"), reply.text).toBe("1");

    const text = readFileSync(out, "utf8");
    expect(text).not.toContain(CARD);
    expect(text).not.toMatch(/\b7391\b/);
    for (const secret of [...Object.values(secrets), "hdr-NEVER-written"]) expect(text).not.toContain(secret);

    const [first, second, third] = readHar(out);
    const sentJson = JSON.parse(first!.request.postData!.text!) as Record<string, string>;
    expect(sentJson).toMatchObject({ card: MASKED_CARD, security_code: "****", api_key: "***", merchant_password: "***", amount: "10.00" });
    expect(headerOf(first!.request.headers, "x-sandbox-api-key")).toBe("***");
    const sentForm = new URLSearchParams(second!.request.postData!.text);
    expect([sentForm.get("card"), sentForm.get("security_code"), sentForm.get("api_key")]).toEqual([MASKED_CARD, "****", "***"]);
    expect(second!.request.queryString).toEqual([{ name: "card", value: MASKED_CARD }]);
    expect(second!.request.url).toBe(`${upstream.url}/v1/authorise?card=${encodeURIComponent(MASKED_CARD)}`);
    expect(JSON.parse(third!.request.postData!.text!)).toMatchObject({ card: MASKED_CARD, security_code: "****", api_key: "***" });
    // the answers hold the gateway's own masked card, as it sent it
    expect(first!.response.content.text).toBe(asJson.text);
    expect(rootText(asJson.text, "card")).toBe(MASKED_CARD);
    expect(await stop(proc)).toBe(0);
  });

  test("a card or code in any shape (card[], card[number], an array, an object, a note) never reaches the HAR", async () => {
    const out = tempHar();
    const proc = record(["--upstream", upstream.url, "--out", out, "--port", "0"]);
    const rec = await proc.url;
    const base = new URLSearchParams(directPayment({ card: undefined, security_code: undefined }) as Record<string, string>).toString();
    await post(`${rec}/v1/authorise`, `${base}&card[]=${CARD}&security_code[]=7391`, "application/x-www-form-urlencoded");
    await post(`${rec}/v1/authorise`, `${base}&card[number]=${CARD}&security_code[x]=7391`, "application/x-www-form-urlencoded");
    await post(`${rec}/v1/authorise`, ...json(directPayment({ card: [CARD], security_code: { v: "7391" } })));
    await post(`${rec}/v1/authorise`, ...json(directPayment({ note: `my card is ${CARD.replace(/(\d{4})(?=\d)/g, "$1 ")}` })));
    const text = readFileSync(out, "utf8");
    expect(readHar(out)).toHaveLength(4);
    expect(text).not.toContain(CARD);
    expect(text).not.toContain(CARD.replace(/(\d{4})(?=\d)/g, "$1 "));
    expect(text).not.toMatch(/\b7391\b/);
    expect(await stop(proc)).toBe(0);
  });

  test("payer pages are recorded as pages, the payer's 303 with its Location", async () => {
    const out = tempHar();
    const proc = record(["--upstream", upstream.url, "--out", out, "--port", "0"]);
    const rec = await proc.url;
    const apm = await post(`${rec}/v1/authorise`, ...form(apmPayment({ return_url: "https://shop.example.com/back" })));
    const issuer = new URL(rootText(apm.text, "issuer_url")!);
    expect(issuer.origin).toBe(upstream.url);
    const page = `${rec}${issuer.pathname}${issuer.search}`;

    const shown = await fetch(page);
    const html = await shown.text();
    expect(shown.status).toBe(200);
    const done = await post(page, "outcome=paid", "application/x-www-form-urlencoded");
    expect(done.status).toBe(303); // not followed
    const location = done.headers.get("location")!;
    expect(location).toMatch(/^https:\/\/shop\.example\.com\/back\?.*order_status=1/);

    const [payment, get, paid] = readHar(out);
    expect([payment, get, paid].map((e) => kindOf(e!))).toEqual(["gateway", "page", "page"]);
    expect(get!.request).toMatchObject({ method: "GET", url: `${upstream.url}${issuer.pathname}${issuer.search}` });
    expect(get!.response.content.text).toBe(html);
    expect(paid!.request).toMatchObject({
      method: "POST",
      url: `${upstream.url}${issuer.pathname}${issuer.search}`,
      postData: { mimeType: "application/x-www-form-urlencoded", text: "outcome=paid" },
    });
    expect(paid!.response.status).toBe(303);
    expect(paid!.response.redirectURL).toBe(location);
    expect(headerOf(paid!.response.headers, "location")).toBe(location);
    expect(await stop(proc)).toBe(0);
  });

  test("with --notify-to, the gateway notifies the recorder, which relays the notification byte for byte and records it", async () => {
    const received: { body: Buffer; headers: IncomingMessage["headers"]; url: string }[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ body: Buffer.concat(chunks), headers: req.headers, url: req.url ?? "" });
        res.writeHead(200, { "content-type": "text/plain" }).end("ok-received");
      });
    });
    servers.push(receiver);
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook?shop=1`;

    const out = tempHar();
    const proc = record(["--upstream", upstream.url, "--out", out, "--port", "0", "--notify-to", hook]);
    const rec = await proc.url;
    const payment = directPayment({ notify_url: "https://shop.example.com/notify" });
    const paid = await post(`${rec}/v1/authorise`, ...json(payment));
    expect(rootText(paid.text, "order_status")).toBe("1");

    // the gateway was given the recorder's address; the HAR keeps what the merchant sent
    const listed = (await (await fetch(`${upstream.url}/__sandbox/notifications?merchant_id=${ACME.merchant_id}`)).json()) as {
      notifications: { url: string; event: string }[];
    };
    expect(listed.notifications.map((n) => n.url)).toEqual([`${rec}/__recorder/notify`]);
    expect(JSON.parse(readHar(out)[0]!.request.postData!.text!).notify_url).toBe("https://shop.example.com/notify");

    const delivery = (await (await fetch(`${upstream.url}/__sandbox/notifications/deliver`, { method: "POST" })).json()) as { delivered: number };
    expect(delivery.delivered).toBe(1);
    expect(received).toHaveLength(1);
    const got = received[0]!;
    expect(got.url).toBe("/hook?shop=1");
    expect(got.headers["x-sandbox-event"]).toBe("payment.authorised");

    const entries = readHar(out);
    expect(entries.map((e) => kindOf(e))).toEqual(["gateway", "notification"]);
    const note = entries[1]!;
    expect(note.request.url).toBe(hook);
    expect(note.request.method).toBe("POST");
    expect(note.request.postData!.text).toBe(got.body.toString("utf8"));
    expect(headerOf(note.request.headers, "x-sandbox-event")).toBe("payment.authorised");
    expect(note.response).toMatchObject({ status: 200, content: { text: "ok-received" } });
    const state = (await (await fetch(`${upstream.url}/__sandbox/notifications`)).json()) as {
      notifications: { state: string; attempts: { response_body: string }[] }[];
    };
    expect(state.notifications[0]).toMatchObject({ state: "delivered", attempts: [{ response_body: "ok-received" }] });

    // a receiver that cannot be reached: the gateway sees a 502 from the recorder, and so does the HAR
    servers.splice(0).forEach((s) => {
      s.closeAllConnections();
      s.close();
    });
    await fetch(`${upstream.url}/__sandbox/notifications/deliver`, { method: "POST" });
    await post(`${rec}/v1/authorise`, ...json(directPayment({ notify_url: "https://shop.example.com/notify" })));
    await fetch(`${upstream.url}/__sandbox/notifications/deliver`, { method: "POST" }).catch(() => undefined);
    const last = readHar(out).at(-1)!;
    expect(kindOf(last)).toBe("notification");
    expect(last.response.status).toBe(502);
    expect(proc.stderr()).toMatch(/notification not relayed/);
    expect(await stop(proc)).toBe(0);
  });

  test("requests go to the upstream's base path with their headers and bytes; answers come back as sent, redirects not followed", async () => {
    const seen: { method: string; url: string; rawHeaders: string[]; body: Buffer }[] = [];
    const echo = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        seen.push({ method: req.method ?? "", url: req.url ?? "", rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) });
        if (req.url?.startsWith("/gw/v1/")) return void res.writeHead(200, { "content-type": "application/json" }).end('{"return_status":"1"}');
        res
          .writeHead(303, { Location: "/gw/next?step=2", "Set-Cookie": "sid=1", "X-Upstream": "yes", "Content-Type": "application/octet-stream" })
          .end(Buffer.from([0xff, 0x00, 0xfe, 0x41]));
      });
    });
    servers.push(echo);
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    const out = tempHar();
    const proc = record(["--upstream", `${base}/gw/`, "--out", out, "--port", "0"]);
    const rec = new URL(await proc.url);

    const body = Buffer.from([0x00, 0x01, 0xc3, 0x28, 0xff]);
    const answer = await new Promise<{ status: number; headers: IncomingMessage["headers"]; body: Buffer }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: rec.hostname,
          port: rec.port,
          method: "PUT",
          path: "/some/page?q=1&q=2",
          headers: {
            "Content-Type": "application/octet-stream",
            "X-Custom": "kept",
            "Proxy-Authorization": "Basic x",
            TE: "trailers",
            "X-Drop-Me": "1",
            Connection: "keep-alive, X-Drop-Me",
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
    expect(answer.status).toBe(303);
    expect(answer.headers).toMatchObject({ location: "/gw/next?step=2", "set-cookie": ["sid=1"], "x-upstream": "yes" });
    expect(answer.body.equals(Buffer.from([0xff, 0x00, 0xfe, 0x41]))).toBe(true);
    const gateway = await post(`${rec.origin}/v1/ping`, "{}", "application/json");
    expect(gateway.text).toBe('{"return_status":"1"}');

    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(["PUT /gw/some/page?q=1&q=2", "POST /gw/v1/ping"]);
    const headers = new Map<string, string>();
    for (let i = 0; i < seen[0]!.rawHeaders.length; i += 2) headers.set(seen[0]!.rawHeaders[i]!.toLowerCase(), seen[0]!.rawHeaders[i + 1]!);
    expect(headers.get("host")).toBe(new URL(base).host);
    expect(headers.get("x-custom")).toBe("kept");
    expect(headers.get("content-type")).toBe("application/octet-stream");
    for (const gone of ["proxy-authorization", "te", "x-drop-me"]) expect(headers.has(gone), gone).toBe(false);
    expect(seen[0]!.body.equals(body)).toBe(true);

    const [page, op] = readHar(out);
    expect(page!._sandgate?.kind).toBe("page");
    expect(page!.request.url).toBe(`${base}/gw/some/page?q=1&q=2`);
    expect(page!.request.queryString).toEqual([
      { name: "q", value: "1" },
      { name: "q", value: "2" },
    ]);
    expect(page!.response.redirectURL).toBe("/gw/next?step=2");
    expect(page!.response.headers.map((h) => h.name.toLowerCase())).not.toContain("set-cookie");
    expect(page!.response.content).toMatchObject({ encoding: "base64", text: Buffer.from([0xff, 0x00, 0xfe, 0x41]).toString("base64") });
    expect(op!._sandgate?.kind).toBe("gateway");
    expect(op!.request.url).toBe(`${base}/gw/v1/ping`);
    expect(await stop(proc)).toBe(0);
  });

  test("an unreachable upstream: 502 in the operation's format, said on stderr, nothing in the HAR; too large a body: 413, not forwarded", async () => {
    const out = tempHar();
    const proc = record(["--upstream", `http://127.0.0.1:${await freePort()}`, "--out", out, "--port", "0"]);
    const rec = await proc.url;

    const authorise = await post(`${rec}/v1/authorise`, ...json(directPayment()));
    expect(authorise.status).toBe(502);
    expect(authorise.headers.get("content-type")).toMatch(/^application\/xml/);
    expect(authorise.headers.get("x-sandgate-recorder")).toBe("upstream-unreachable");
    expect(authorise.text).toMatch(
      /^<\?xml version="1\.0" encoding="UTF-8"\?><respon><return_status>0<\/return_status><return_message>I0502:Upstream unreachable: [^<]*ECONNREFUSED[^<]*<\/return_message><\/respon>$/,
    );

    const capture = await post(`${rec}/v1/capture`, ...json({ ...envelope, capture_orders: [] }));
    expect(capture.status).toBe(502);
    expect(capture.headers.get("content-type")).toMatch(/^application\/json/);
    expect(capture.headers.get("x-sandgate-recorder")).toBe("upstream-unreachable");
    expect(JSON.parse(capture.text)).toEqual({ return_status: "0", return_message: expect.stringMatching(/^I0502:Upstream unreachable: .*ECONNREFUSED/) });

    const checkout = await post(`${rec}/v1/checkout`, ...json({ ...envelope }));
    expect(checkout.status).toBe(502);
    expect(checkout.headers.get("content-type")).toMatch(/^text\/html/);
    expect(checkout.text).toMatch(/could not be reached/);

    const huge = await post(`${rec}/v1/refund`, Buffer.alloc(10 * 1024 * 1024 + 1, 0x20), "application/json");
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.text)).toMatchObject({ return_status: "0" });

    expect(readHar(out)).toEqual([]);
    expect(proc.stderr()).toMatch(/upstream unreachable for POST \/v1\/authorise: .*ECONNREFUSED/);
    expect(await stop(proc)).toBe(0);
    expect(proc.stdout()).toContain(`recorded 0 exchanges to ${out}`);
    expect(readHar(out)).toEqual([]);
  });

  test.each([
    ["no --upstream", ["--out", "x.har"], /--upstream/],
    ["an upstream that is not a URL", ["--upstream", "gateway.example", "--out", "x.har"], /--upstream must be an http or https URL/],
    ["no --out", ["--upstream", "http://127.0.0.1:9"], /--out/],
    ["a port that is not a number", ["--upstream", "http://127.0.0.1:9", "--out", "x.har", "--port", "eighty"], /--port/],
  ])("%s: exit 2 with one line and no stack trace", async (_name, args, message) => {
    const proc = record(args);
    proc.url.catch(() => undefined); // it never listens
    expect(await proc.exited).toBe(2);
    const lines = proc.stderr().trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
    expect(proc.stderr()).not.toMatch(/\n\s+at /);
    expect(proc.stdout()).toBe("");
  });
});

describe("masking (what the HAR may hold)", () => {
  test("card numbers keep their first six and last four; masked ones stay; security codes and secrets go", () => {
    expect(maskValue("card", CARD)).toBe(MASKED_CARD);
    expect(maskValue("cardNumber", "4242 4242 4242 4242")).toBe(MASKED_CARD);
    expect(maskValue("pan", MASKED_CARD)).toBe(MASKED_CARD);
    expect(maskValue("cvv", "123")).toBe("***");
    expect(maskValue("security_code", "1234")).toBe("****");
    for (const name of ["key", "api_key", "secret_key", "merchant_secret", "password", "apiKey"]) expect(maskValue(name, "abc"), name).toBe("***");
    expect(maskHeader("Authorization", "Bearer x")).toBe("***");
    expect(maskHeader("X-Api-Key", "x")).toBe("***");
  });

  test("any Luhn-valid 13–19 digits is a card, unless it is named as an identifier", () => {
    expect(maskValue("note", "4000056655665556")).toBe("400005******5556");
    expect(maskValue("transaction_id", "4000056655665556")).toBe("4000056655665556");
    expect(maskValue("order_no", "4000056655665556")).toBe("4000056655665556");
    expect(maskValue("refund_reference", "4000056655665556")).toBe("4000056655665556");
    expect(maskValue("note", "4000056655665557")).toBe("4000056655665557"); // fails Luhn
    // dates and times that pass Luhn by chance are not cards
    expect(maskValue("refund_processing_date", "20261005090000")).toBe("20261005090000");
    expect(maskValue("when", "20261005090000")).toBe("20261005090000");
    expect(maskValue("checkout_time", "1767225600008")).toBe("1767225600008");
  });

  test("JSON at any depth, forms in their order, JSON sent as a form, XML, HTML inputs, URLs", () => {
    const deep = JSON.parse(maskBody(JSON.stringify({ a: { b: [{ card_no: CARD, cvc: "321" }] } }), "application/json"));
    expect(deep).toEqual({ a: { b: [{ card_no: MASKED_CARD, cvc: "***" }] } });
    expect(maskBody(`z=1&card=${CARD}&a=2&cvv2=123`, "application/x-www-form-urlencoded")).toBe(`z=1&card=${encodeURIComponent(MASKED_CARD)}&a=2&cvv2=***`);
    expect(JSON.parse(maskBody(`{"card":"${CARD}"}`, "application/x-www-form-urlencoded"))).toEqual({ card: MASKED_CARD });
    expect(maskBody(`<respon><card>${CARD}</card><security_code>123</security_code></respon>`, "application/xml")).toBe(
      `<respon><card>${MASKED_CARD}</card><security_code>***</security_code></respon>`,
    );
    expect(maskBody(`<form><input name="card" value="${CARD}"><input value='12' name='cvc'></form>`, "text/html")).toBe(
      `<form><input name="card" value="${MASKED_CARD}"><input value="**" name='cvc'></form>`,
    );
    expect(maskUrl(`https://x.example/p?card=${CARD}&k=1#f`)).toBe(`https://x.example/p?card=${encodeURIComponent(MASKED_CARD)}&k=1#f`);
    const harmless = '{"merchant_id":"M1",  "amount": 10.50}';
    expect(maskBody(harmless, "application/json")).toBe(harmless);
  });
});

describe("sandgate record under npx", () => {
  test("`npx sandgate record … &` then `kill $!` stops npx: the recorder, orphaned, stops within a second and the HAR is written", async () => {
    const upstream = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent" });
    const out = join(mkdtempSync(join(tmpdir(), "sandgate-npx-record-")), "npx.har");
    const { BASE_URL: _vite, ...env } = process.env;
    const npx = spawn("npx", ["--no-install", "sandgate", "record", "--upstream", upstream.url, "--out", out, "--port", "0"], {
      cwd: join(import.meta.dirname, ".."),
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let said = "";
      npx.stdout.on("data", (d: Buffer) => (said += d.toString()));
      await until(() => /listening on (http\S+?),/.test(said));
      const recorder = /listening on (http\S+?),/.exec(said)![1]!;
      // npm passes SIGTERM to the shell it runs the command in, which dies: the recorder is re-parented
      npx.kill("SIGTERM");
      await new Promise((resolve) => npx.once("exit", resolve));
      const gone = async () =>
        fetch(`${recorder}/__sandbox/health`).then(
          () => false,
          () => true,
        );
      await until(gone); // it stops with its parent
      expect(existsSync(out)).toBe(true);
    } finally {
      if (npx.exitCode === null) npx.kill("SIGKILL");
      await upstream.close();
    }
  }, 30_000);
});

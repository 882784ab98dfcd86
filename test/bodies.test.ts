// Request bodies of /v1/authorise as clients send them: JSON, form (bracket nesting, JSON strings
// for objects), JSON sent as a form (the interface document's samples); and refusals of everything else.
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import qs from "qs";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { directPayment, makeApp, parseXml, postAuthorise, snapshotState, textOf } from "./helpers.js";

type App = Awaited<ReturnType<typeof makeApp>>["app"];

const FORM = "application/x-www-form-urlencoded";
const subscription = { interval: "month", interval_count: "1", billing_cycle: "12", contract_name: "Box" };

/** The request every refusal below is followed by: the server must still answer it. */
async function expectStillServing(app: App) {
  const res = await postAuthorise(app, directPayment());
  expect(res.status).toBe(200);
  expect(textOf(parseXml(res.text).order_status)).toBe("1");
}

/** Sends the bytes as given: no content type when none is named (superagent would add a form type to a string). */
const post = (app: App, body: string | Buffer, contentType?: string) => {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, "utf8");
  const req = request(app).post("/v1/authorise");
  if (contentType === undefined) return req.send(bytes);
  // superagent would JSON-encode a Buffer sent as application/json: pass the bytes through untouched
  return req
    .set("Content-Type", contentType)
    .serialize((b: unknown) => b as string)
    .send(bytes);
};

describe("accepted bodies", () => {
  const accepted: { name: string; contentType: string | undefined; body: () => string }[] = [
    { name: "JSON", contentType: "application/json", body: () => JSON.stringify(directPayment({ subscription })) },
    { name: "JSON with a charset", contentType: "application/json; charset=utf-8", body: () => JSON.stringify(directPayment({ subscription })) },
    {
      name: "JSON sent with the form content type (the interface document's samples)",
      contentType: FORM,
      body: () => JSON.stringify(directPayment({ subscription })),
    },
    { name: "JSON without a content type", contentType: undefined, body: () => JSON.stringify(directPayment({ subscription })) },
    { name: "JSON as text/plain", contentType: "text/plain", body: () => JSON.stringify(directPayment({ subscription })) },
    { name: "a form with bracket nesting (subscription[interval]=month)", contentType: FORM, body: () => qs.stringify(directPayment({ subscription })) },
    { name: "a form without a content type", contentType: undefined, body: () => qs.stringify(directPayment({ subscription })) },
    {
      name: "a form with a JSON string for an object field",
      contentType: FORM,
      body: () => qs.stringify(directPayment({ subscription: JSON.stringify(subscription) })),
    },
  ];

  test.each(accepted)("$name", async ({ contentType, body }) => {
    const { app } = await makeApp();
    const res = await post(app, body(), contentType);
    expect(res.status, res.text).toBe(200);
    const xml = parseXml(res.text);
    expect(textOf(xml.order_status)).toBe("1");
    expect(textOf(xml.contract_name)).toBe("Box");
    expect(textOf(xml.recurring_deduction_period)).toBe("1 month");
  });

  test("JSON starting with a byte order mark (as some .NET clients send it)", async () => {
    const { app } = await makeApp();
    const res = await post(app, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(directPayment()))]), "application/json");
    expect(res.status, res.text).toBe(200);
  });

  test("gzip-encoded JSON", async () => {
    const { app } = await makeApp();
    const res = await request(app)
      .post("/v1/authorise")
      .set("Content-Type", "application/json")
      .set("Content-Encoding", "gzip")
      .serialize((b: unknown) => b as string)
      .send(gzipSync(JSON.stringify(directPayment())));
    expect(res.status, res.text).toBe(200);
  });

  test("a form carries nested arrays of objects (cart_items[0][basic_item_data][price][amount_usd])", async () => {
    const { app, deps } = await makeApp();
    const cart_items = [{ basic_item_data: { name: "Tent", quantity: "1", price: { amount_usd: "10.5", currency: "USD" } } }];
    const body = directPayment({ cart_items, checkout_time: "1767225600" });
    const res = await post(app, qs.stringify(body), FORM);
    expect(res.status, res.text).toBe(200);
    expect(deps.store.data.transactions.some((t) => t.order_no === body.order_no)).toBe(true);
  });

  test("a form's bad nested value is named by its path", async () => {
    const { app } = await makeApp();
    const body = directPayment({ cart_items: [{ basic_item_data: { price: { amount_usd: "x" } } }] });
    const res = await post(app, qs.stringify(body), FORM);
    expect(res.status).toBe(400);
    expect(textOf(parseXml(res.text).result_info)).toContain("cart_items[0].basic_item_data.price.amount_usd");
  });

  test("a form with a broken JSON string for an object field is refused naming the field", async () => {
    const { app } = await makeApp();
    const res = await post(app, qs.stringify(directPayment({ subscription: '{"interval":' })), FORM);
    expect(res.status).toBe(400);
    expect(textOf(parseXml(res.text).result_info)).toMatch(/^I0002:.*subscription/);
  });
});

describe("refused bodies", () => {
  const refused: { name: string; contentType: string | undefined; body: () => string | Buffer; status: number; code: string }[] = [
    { name: "text/plain garbage", contentType: "text/plain", body: () => "hello gateway", status: 400, code: "I0005" },
    { name: "garbage without a content type", contentType: undefined, body: () => "not a body at all", status: 400, code: "I0005" },
    { name: "XML", contentType: "application/xml", body: () => "<respon><amount>1</amount></respon>", status: 400, code: "I0005" },
    {
      name: "multipart/form-data",
      contentType: "multipart/form-data; boundary=XX",
      body: () => '--XX\r\nContent-Disposition: form-data; name="merchant_id"\r\n\r\nM10001\r\n--XX--\r\n',
      status: 400,
      code: "I0005",
    },
    { name: "invalid JSON", contentType: "application/json", body: () => '{"merchant_id": "M10001",', status: 400, code: "I0003" },
    { name: "invalid JSON sent as a form", contentType: FORM, body: () => '{"merchant_id": ', status: 400, code: "I0003" },
    { name: "a JSON array", contentType: "application/json", body: () => JSON.stringify([directPayment()]), status: 400, code: "I0003" },
    { name: "a JSON string", contentType: "application/json", body: () => '"M10001"', status: 400, code: "I0003" },
    { name: "JSON null", contentType: "application/json", body: () => "null", status: 400, code: "I0003" },
    {
      name: "invalid UTF-8 bytes",
      contentType: "application/json",
      body: () => Buffer.concat([Buffer.from('{"merchant_id":"M1'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]),
      status: 400,
      code: "I0003",
    },
    { name: "an empty body", contentType: "application/json", body: () => "", status: 400, code: "I0001" },
  ];

  test.each(refused)("$name → $status $code in XML, nothing changes, the server keeps serving", async ({ contentType, body, status, code }) => {
    const { app, deps } = await makeApp();
    const before = snapshotState(deps);
    const res = await post(app, body(), contentType);
    expect(res.status).toBe(status);
    expect(res.type).toBe("application/xml");
    const xml = parseXml(res.text);
    expect(textOf(xml.order_status)).toBe("0");
    expect(textOf(xml.result_info)).toMatch(new RegExp(`^${code}:\\S`));
    expect(res.text).not.toMatch(/at .*\.(ts|js):\d+/);
    expect(snapshotState(deps)).toEqual(before);
    await expectStillServing(app);
  });

  test("an unknown Content-Encoding → 400 I0005 in XML", async () => {
    const { app } = await makeApp();
    const res = await request(app)
      .post("/v1/authorise")
      .set("Content-Type", "application/json")
      .set("Content-Encoding", "x-unheard-of")
      .send(JSON.stringify(directPayment()));
    expect(res.status).toBe(400);
    expect(textOf(parseXml(res.text).result_info)).toMatch(/^I0005:/);
    await expectStillServing(app);
  });

  test("a gzip body that inflates beyond the limit → 413 I0004", async () => {
    const { app } = await makeApp({ bodyLimit: "10kb" });
    const res = await request(app)
      .post("/v1/authorise")
      .set("Content-Type", "application/json")
      .set("Content-Encoding", "gzip")
      .serialize((b: unknown) => b as string)
      .send(gzipSync(JSON.stringify(directPayment({ note: "z".repeat(200_000) }))));
    expect(res.status).toBe(413);
    expect(textOf(parseXml(res.text).result_info)).toMatch(/^I0004:/);
    await expectStillServing(app);
  });

  test("a body over --body-limit (1kb) → 413 I0004 in XML", async () => {
    const { app, deps } = await makeApp({ bodyLimit: "1kb" });
    const before = snapshotState(deps);
    const res = await post(app, JSON.stringify(directPayment({ note: "x".repeat(2_000) })), "application/json");
    expect(res.status).toBe(413);
    expect(res.type).toBe("application/xml");
    expect(textOf(parseXml(res.text).result_info)).toMatch(/^I0004:.*1kb/);
    expect(snapshotState(deps)).toEqual(before);
    await expectStillServing(app);
  });

  test("a 2 MB body over the default limit (1mb) → 413 I0004 in XML", async () => {
    const { app } = await makeApp();
    const res = await post(app, JSON.stringify(directPayment({ note: "x".repeat(2 * 1024 * 1024) })), "application/json");
    expect(res.status).toBe(413);
    expect(textOf(parseXml(res.text).result_info)).toMatch(/^I0004:/);
    await expectStillServing(app);
  });

  test("a body just under the default limit is read", async () => {
    const { app } = await makeApp();
    const res = await post(app, JSON.stringify(directPayment({ note: "x".repeat(900 * 1024) })), "application/json");
    expect(res.status).toBe(200);
  });
});

describe("on a real listening server", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", logLevel: "silent", bodyLimit: "64kb" });
  });
  afterAll(() => sandbox.close());

  const health = async () => (await fetch(`${sandbox.url}/__sandbox/health`)).status;

  /** Sends raw bytes on a fresh connection and closes it; resolves with whatever came back. */
  function sendRaw(head: string, bodyPart: Buffer | string, { end }: { end: boolean }): Promise<string> {
    return new Promise((resolve) => {
      const socket = connect(sandbox.port, "127.0.0.1");
      let answer = "";
      socket.on("data", (chunk) => (answer += chunk.toString("utf8")));
      socket.on("error", () => resolve(answer));
      socket.on("close", () => resolve(answer));
      socket.write(head);
      socket.write(bodyPart, () => {
        if (end) socket.end();
        else setTimeout(() => socket.destroy(), 50);
      });
    });
  }

  test("a body cut off by the client mid-way does not bring the server down", async () => {
    const partial = JSON.stringify(directPayment()).slice(0, 40);
    const head = `POST /v1/authorise HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n`;
    await sendRaw(head, partial, { end: false });
    expect(await health()).toBe(200);
    const before = sandbox.deps.store.data.transactions.length;
    const ok = await fetch(`${sandbox.url}/v1/authorise`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(directPayment()),
    });
    expect(ok.status).toBe(200);
    expect(sandbox.deps.store.data.transactions.length).toBe(before + 1);
  });

  test("a body shorter than its Content-Length, then half-closed, is refused or dropped, never crashes", async () => {
    const head = `POST /v1/authorise HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    const answer = await sendRaw(head, '{"merchant_id":"M10001"', { end: true });
    if (answer) expect(answer).toMatch(/^HTTP\/1\.1 4\d\d /);
    expect(await health()).toBe(200);
  });

  test("a huge body (1 MB over a 64kb limit) gets 413 in XML and the server keeps serving", async () => {
    const res = await fetch(`${sandbox.url}/v1/authorise`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(directPayment({ note: "y".repeat(1024 * 1024) })),
    });
    expect(res.status).toBe(413);
    expect(textOf(parseXml(await res.text()).result_info)).toMatch(/^I0004:/);
    expect(await health()).toBe(200);
  });

  test("a huge body streamed by a client that then vanishes leaves the server healthy", async () => {
    const size = 4 * 1024 * 1024;
    const head = `POST /v1/authorise HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
    await sendRaw(head, Buffer.alloc(size / 2, 0x61), { end: false });
    expect(await health()).toBe(200);
  });
});

describe("control characters", () => {
  test.each([
    ["a top-level field", { order_no: "A\u0001B" }, "order_no"],
    ["a nested field", { subscription: { contract_name: "x\u001fy" } }, "subscription.contract_name"],
    [
      "a field inside a list",
      { additional_information: [{ mpi_info: { eci: "05" } }, { mpi_info: { cavv: "a\u0000b" } }] },
      "additional_information[1].mpi_info.cavv",
    ],
    ["a lone surrogate", { note: "half \uD83D of an emoji" }, "note"],
  ])("in %s are refused naming the field, and nothing is stored", async (_name, change, field) => {
    const { app, deps } = await makeApp();
    const before = deps.store.data.transactions.length;
    const res = await request(app).post("/v1/authorise").send(directPayment(change));
    expect(res.status).toBe(400);
    expect(res.text).toContain(`<field>${field}</field>`);
    expect(res.text).toMatch(/I0002:Invalid field/);
    expect(deps.store.data.transactions.length).toBe(before);
  });

  // the characters themselves, not escaped: JSON may carry DEL and noncharacters as they are, and a
  // form carries any of them percent-encoded (XML cannot carry a control character: a key's own is
  // named as \uXXXX)
  test.each([
    ["raw DEL in JSON", "application/json", JSON.stringify(directPayment({ order_no: "A\u007fB" })), "order_no"],
    ["a raw noncharacter in JSON", "application/json", JSON.stringify(directPayment({ note: "x\uFFFEy" })), "note"],
    ["a percent-encoded one in a form", FORM, new URLSearchParams(directPayment({ order_no: "A\u0001B" }) as Record<string, string>).toString(), "order_no"],
    ["a percent-encoded one in a form key", FORM, `${new URLSearchParams(directPayment() as Record<string, string>).toString()}&x%07y=1`, "x\\u0007y"],
  ])("%s is refused too", async (_name, type, body, field) => {
    const { app, deps } = await makeApp();
    const before = deps.store.data.transactions.length;
    const res = await request(app).post("/v1/authorise").set("Content-Type", type).send(body);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/I0002:Invalid field/);
    expect(res.text).toContain(`<field>${field}</field>`);
    // eslint-disable-next-line no-control-regex -- no control character in the answer is the point
    expect(res.text).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/);
    expect(deps.store.data.transactions.length).toBe(before);
  });
});

describe("what a hosted checkout keeps of its request for the payer's page", () => {
  test("the top-level texts: a number as text; nested values and an own __proto__ are not fields", async () => {
    const { app, deps } = await makeApp();
    const { card: _c, expiration_month: _m, expiration_year: _y, security_code: _s, amount: _a, ...rest } = directPayment();
    // written as text: JSON.stringify would not write an own "__proto__"
    const body = `${JSON.stringify({ ...rest, extra: { nested: "x" } }).slice(0, -1)},"amount":25,"__proto__":"polluted"}`;
    const res = await request(app).post("/v1/checkout").set("content-type", "application/json").send(body);
    expect(res.status).toBe(200);
    const tx = deps.store.data.transactions.at(-1)!;
    expect(tx.order_no).toBe(rest.order_no);
    const fields = tx.payer_request!.fields;
    expect(fields.amount).toBe("25");
    expect(fields.order_no).toBe(rest.order_no);
    expect(fields).not.toHaveProperty("extra");
    expect(Object.hasOwn(fields, "__proto__")).toBe(false);
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
  });
});

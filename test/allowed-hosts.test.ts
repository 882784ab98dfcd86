// DNS rebinding: a page served from http://rebind.test:PORT/ whose name then resolves to the sandbox
// is the sandbox's own origin to the browser, and would pass the cross-site check. /__sandbox serves
// a browser (Sec-Fetch-*, Origin or a browser's User-Agent sent) only under loopback names, IP
// addresses, --base-url's host and --allowed-hosts; scripts (none of them) under any name; the
// gateway and payer pages always.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { App } from "../src/server/app.js";
import type { Deps } from "../src/deps/deps.js";
import { ACME, directPayment, makeApp, postAuthorise } from "./helpers.js";
import { HAS_CHROMIUM, launch } from "./browser-helpers.js";

/** What a browser on a page of `origin` sends to it: same-origin, as the rebinding page is. */
const asBrowserOn = (origin: string) => ({ host: new URL(origin).host, origin, "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" });

describe("a browser under a foreign Host", () => {
  let app: App;
  let deps: Deps;
  beforeAll(async () => {
    ({ app, deps } = await makeApp({ allowedHosts: "sandbox.corp.example, *.qa.example" }));
    await postAuthorise(app, directPayment()).expect(200);
  });

  test("is refused everything under /__sandbox, without ADMIN_TOKEN: nothing changes, nothing is read", async () => {
    const rebind = asBrowserOn("http://rebind.test:8080");
    const before = { scenario: deps.scenarios.global(), transactions: deps.store.data.transactions.length, offset: deps.clock.offsetMs() };
    const answers = await Promise.all([
      request(app).put("/__sandbox/scenarios/global").set(rebind).send({ name: "declines" }),
      request(app)
        .get("/__sandbox/requests.har")
        .set({ ...rebind, "sec-fetch-mode": "cors" }),
      request(app).get("/__sandbox/transactions").set(rebind),
      request(app).post("/__sandbox/reset").set(rebind).send({ all: true }),
      request(app).post("/__sandbox/clock").set(rebind).send({ advance: "3d" }),
      request(app).post("/__sandbox/receiver-checks").set(rebind).send({ url: "http://127.0.0.1:6379/", merchant_id: ACME.merchant_id }),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(403);
      expect(res.body.error).toBe("host_not_allowed");
      expect(res.body.message).toContain('"rebind.test"');
      expect(res.body.message).toContain("--allowed-hosts rebind.test");
      expect(res.text).not.toContain(ACME.merchant_id);
    }
    expect({ scenario: deps.scenarios.global(), transactions: deps.store.data.transactions.length, offset: deps.clock.offsetMs() }).toEqual(before);
    // the dashboard: a page in its own format
    const page = await request(app)
      .get("/__sandbox/")
      .set({ host: "rebind.test:8080", "sec-fetch-site": "none", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" });
    expect(page.status).toBe(403);
    expect(page.type).toBe("text/html");
    expect(page.text).toContain("Refused: unknown host name");
    expect(page.text).toContain("--allowed-hosts rebind.test");
  });

  test.each([
    ["localhost", "http://localhost:8080"],
    ["a name under .localhost", "http://sandgate.localhost:8080"],
    ["127.0.0.1", "http://127.0.0.1:8080"],
    ["[::1]", "http://[::1]:8080"],
    ["a LAN address", "http://192.168.1.20:8080"],
    ["an --allowed-hosts name", "http://sandbox.corp.example"],
    ["an --allowed-hosts name, with a final dot and in capitals", "http://SANDBOX.corp.example."],
    ["a name under an --allowed-hosts *. entry", "http://team-a.qa.example:8080"],
  ])("%s is served", async (_name, origin) => {
    const res = await request(app).get("/__sandbox/scenarios").set(asBrowserOn(origin));
    expect(res.status).toBe(200);
    expect(res.body.global).toBeDefined();
  });

  test("a *. entry does not cover the domain itself, nor a name that only ends alike", async () => {
    for (const origin of ["http://qa.example", "http://evilqa.example"]) {
      expect((await request(app).get("/__sandbox/scenarios").set(asBrowserOn(origin))).status, origin).toBe(403);
    }
  });

  test("scripts and CI (no Origin, no Sec-Fetch-*, no browser User-Agent) reach /__sandbox under any name, e.g. a compose service's", async () => {
    for (const agent of [undefined, "curl/8.5.0", "node", "GuzzleHttp/7", "Java-http-client/17"]) {
      const res = await request(app)
        .put("/__sandbox/scenarios/bindings/CI-JOB-7")
        .set({ host: "sandgate:8080", ...(agent ? { "user-agent": agent } : {}) })
        .send({ name: "declines" });
      expect(res.status, agent).toBe(200);
    }
  });

  test("a browser's plain GET (over http to a name, Chromium sends no Sec-Fetch-* and no Origin) is told by its User-Agent", async () => {
    const res = await request(app)
      .get("/__sandbox/requests.har")
      .set({ host: "rebind.test:8080", "user-agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36" });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("host_not_allowed");
  });

  test("the gateway's operations and payer pages answer a browser under any Host", async () => {
    await postAuthorise(app, directPayment()).set(asBrowserOn("http://shop.example")).expect(200);
  });

  test("--base-url's host is served", async () => {
    const { app: behindProxy } = await makeApp({ baseUrl: "https://sandgate.example.com" });
    expect((await request(behindProxy).get("/__sandbox/scenarios").set(asBrowserOn("https://sandgate.example.com"))).status).toBe(200);
    expect((await request(behindProxy).get("/__sandbox/scenarios").set(asBrowserOn("https://other.example.com"))).status).toBe(403);
  });
});

// The attack itself, in Chromium: the attacker's page is served at http://rebind.test:PORT/ and the
// name resolves to the sandbox (a host resolver rule stands for the rebound DNS answer); its script
// tries what the attack on main did: switch the global scenario, read the HAR, run a receiver check.
// (Over plain http to a name Chromium sends no Sec-Fetch-*, and the HAR's GET no Origin: this is
// the test that showed those headers alone do not tell a browser.)
describe.skipIf(!HAS_CHROMIUM)("a DNS rebinding page in Chromium", () => {
  let server: Server;
  let deps: Deps;
  let port: number;
  beforeAll(async () => {
    const made = await makeApp();
    deps = made.deps;
    // /attack.html stands for the attacker's server, at the same origin before the name was rebound
    server = createServer((req, res) =>
      req.url === "/attack.html" ? res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>attack</title>") : made.app(req, res),
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test("its same-origin requests to /__sandbox are refused and change nothing; the same page under localhost works", async () => {
    const browser = await launch([`--host-resolver-rules=MAP rebind.test 127.0.0.1`]);
    try {
      const attack = async (origin: string) => {
        const page = await browser.newPage();
        await page.goto(`${origin}/attack.html`);
        const statuses = await page.evaluate(async () => {
          const put = await fetch("/__sandbox/scenarios/global", {
            method: "PUT",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name: "declines" }),
          });
          const har = await fetch("/__sandbox/requests.har");
          const check = await fetch("/__sandbox/receiver-checks", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ url: "http://127.0.0.1:1/", merchant_id: "M10001" }),
          });
          return [put.status, har.status, check.status];
        });
        await page.close();
        return statuses;
      };
      expect(await attack(`http://rebind.test:${port}`)).toEqual([403, 403, 403]);
      expect(deps.scenarios.global()).toBe("default");
      // the control: the same requests from a page of the sandbox's own loopback name go through
      const [put, har] = await attack(`http://localhost:${port}`);
      expect([put, har]).toEqual([200, 200]);
      expect(deps.scenarios.global()).toBe("declines");
    } finally {
      await browser.close();
    }
  });
});

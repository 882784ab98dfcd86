// sandgate/testcontainers: the image built from this repository started by Testcontainers (the
// package's own module, imported as a merchant's test does), waited for by its health check, and
// paid through: the gateway's URL and the typed operator client it gives. Ryuk (Testcontainers'
// reaper) is an image from a registry this machine cannot reach: off, and the test stops its own.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { directPayment, parseXml, signRequest, textOf } from "./helpers.js";
import { ensureBuilt } from "../scripts/sandgate-process.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const HAS_DOCKER = spawnSync("docker", ["info"], { stdio: "ignore", timeout: 10_000 }).status === 0;
const IMAGE = `sandgate-testcontainers:${process.pid}`;

describe.skipIf(!HAS_DOCKER)("sandgate/testcontainers (needs a Docker engine)", () => {
  test("SandgateContainer starts the image, waits for it to be healthy, and a strictly signed payment goes through it", async () => {
    const built = spawnSync("docker", ["build", "--network", "host", "-t", IMAGE, "."], { cwd: ROOT, encoding: "utf8", timeout: 600_000 });
    expect(built.status, built.stderr).toBe(0);
    process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
    // by the package's own name, as a merchant's test imports it (its exports map: the built dist/);
    // a specifier tsc does not resolve, so a checkout without dist/ still type-checks
    ensureBuilt();
    const entry = "sandgate/testcontainers";
    const { SandgateContainer } = (await import(entry)) as typeof import("../src/testcontainers.js");
    const sandgate = await new SandgateContainer(IMAGE).withSignatureMode("strict").withScenario("declines").withAdminToken("tc-token").start();
    try {
      expect(sandgate.url).toMatch(/^http:\/\/[^:]+:\d+$/);
      expect(await sandgate.admin.health()).toMatchObject({ status: "ok", scenario: "declines", signature_mode: "strict" });
      const body = directPayment();
      const pay = async (fields: Record<string, unknown>) =>
        parseXml(
          await (
            await fetch(`${sandgate.url}/v1/authorise`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(fields) })
          ).text(),
        );
      // strict: a wrong signature is refused; the right one pays (declined: the scenario asked for)
      expect(textOf((await pay(body)).result_info)).toMatch(/^I0014:/);
      const signed = await pay({ ...body, encryption_data: signRequest("authorise", body, "acme_test_key_7f3a9c21") });
      expect(textOf(signed.result_info)).toMatch(/^D\d{4}:/);
      await sandgate.admin.setScenario("default");
      const again = { ...body, order_no: `${String(body.order_no)}-2` };
      expect(textOf((await pay({ ...again, encryption_data: signRequest("authorise", again, "acme_test_key_7f3a9c21") })).result_info)).toBe("0000:Success");
    } finally {
      await sandgate.stop();
      spawnSync("docker", ["rmi", "-f", IMAGE], { stdio: "ignore" });
    }
  }, 700_000);
});

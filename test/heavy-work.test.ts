// One tester's heavy call cannot hold the team's sandbox. POST /__sandbox/verify replays in a worker
// thread, one at a time per process with three waiting, a fifth refused with 429 and Retry-After;
// a recording that needs more memory than the thread may use is refused, not served by the process.
// Receiver checks (two at a time, four waiting) and HAR exports (one, three waiting) are gated alike.
// Against a Sandgate in its own process, built as the team's shared instance runs it (dist/, as
// `npm start` and the image), while a 20 MB hostile recording (an HTML answer opening 3.4 million
// forms, none closed) and three more verifies run: every health check and payment meanwhile is
// answered. How fast they are answered meanwhile is `npm run bench:hostile-verify`'s figure.
import { readFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ensureBuilt, spawnSandgate, type SandgateProcess } from "../scripts/sandgate-process.js";
import { verifyInThread } from "../src/admin/verify-thread.js";
import { directPayment, makeApp, postAuthorise } from "./helpers.js";

interface Har {
  log: { entries: { response: { content: { mimeType: string; text?: string; size: number } } }[] };
}

/** A recording of one approved payment, as Sandgate's own HAR export writes it. */
async function recording(): Promise<Har> {
  const { app } = await makeApp();
  await postAuthorise(app, directPayment()).expect(200);
  return (await request(app).get("/__sandbox/requests.har").expect(200)).body as Har;
}

/** The same recording whose answer was an HTML page of `forms` <form> tags never closed. */
function hostile(har: Har, forms: number): string {
  const copy = structuredClone(har);
  const content = copy.log.entries[0]!.response.content;
  content.mimeType = "text/html; charset=utf-8";
  content.text = "<form>".repeat(forms);
  content.size = content.text.length;
  return JSON.stringify(copy);
}

/** Peak resident memory of a process (VmHWM), in MB. */
const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

describe("verify beside the team's traffic", () => {
  let sandgate: SandgateProcess;
  let url: string;
  let har: Har;
  beforeAll(async () => {
    ensureBuilt();
    sandgate = spawnSandgate(["--port", "0", "--host", "127.0.0.1"], { built: true });
    url = await sandgate.url;
    har = await recording();
  }, 120_000);
  afterAll(async () => {
    sandgate.child.kill("SIGTERM");
    await sandgate.exited;
  });

  const verify = (body: string) => fetch(`${url}/__sandbox/verify`, { method: "POST", headers: { "content-type": "application/json" }, body });

  test("a 20 MB hostile recording and three more verifies: health and payments keep answering, the hostile one is answered, memory stays bounded", async () => {
    const body = hostile(har, 3_400_000);
    expect(body.length).toBeGreaterThan(20_000_000 - 100_000);
    const normal = JSON.stringify(har);
    const verifies = [
      verify(body).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: string; differences?: unknown[] } })),
      ...[1, 2, 3].map(() => verify(normal).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: string; differences?: unknown[] } }))),
    ];
    let done = false;
    void Promise.all(verifies).then(() => (done = true));
    let checks = 0;
    while (!done || checks < 5) {
      expect((await fetch(`${url}/__sandbox/health`)).status).toBe(200);
      await postAuthorise(url, directPayment()).expect(200);
      checks++;
    }
    const answers = await Promise.all(verifies);
    // the hostile one: a report (its one answer differs) or a clear refusal
    expect([200, 413]).toContain(answers[0]!.status);
    if (answers[0]!.status === 200) expect(answers[0]!.body.differences!.length).toBeGreaterThan(0);
    else expect(answers[0]!.body.error).toBe("verify_out_of_memory");
    // the three others waited their turn and were replayed
    for (const a of answers.slice(1)) expect(a).toMatchObject({ status: 200, body: { differences: [] } });
    // memory stays bounded: the replay's thread has a ceiling of its own
    expect(peakRssMb(sandgate.child.pid!)).toBeLessThan(600);
  }, 60_000);

  test("a fifth verify while one runs and three wait is refused at once: 429 busy, Retry-After", async () => {
    const body = hostile(har, 1_000_000);
    const all = await Promise.all(
      [0, 1, 2, 3, 4, 5].map(() =>
        verify(body).then(async (r) => ({ status: r.status, retry: r.headers.get("retry-after"), body: (await r.json()) as { error?: string } })),
      ),
    );
    const refused = all.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) expect(r).toMatchObject({ retry: "10", body: { error: "busy" } });
    expect(all.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(4);
    // and once they are done, verify takes calls again
    expect((await verify(JSON.stringify(har))).status).toBe(200);
  }, 60_000);
});

describe("receiver checks", () => {
  test("a seventh check while two run and four wait is refused at once with 429 and Retry-After", async () => {
    // a receiver that takes connections and never answers: each check waits on it
    const sockets = new Set<Socket>();
    const silent = createServer((s) => sockets.add(s).size);
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as { port: number }).port;
    const sandgate = spawnSandgate(["--port", "0", "--host", "127.0.0.1"]);
    const url = await sandgate.url;
    try {
      const check = () =>
        fetch(`${url}/__sandbox/receiver-checks`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook`, merchant_id: "M10001" }),
        });
      // seven at once: two run (on the receiver, which never answers), four wait, and whichever came
      // last is refused at once, so it is the first of the seven answered
      const pending = [1, 2, 3, 4, 5, 6, 7].map(() => check());
      const seventh = await Promise.race(pending);
      expect(seventh.status).toBe(429);
      expect(seventh.headers.get("retry-after")).toBe("5");
      expect(await seventh.json()).toMatchObject({ error: "busy" });
      // health is not gated
      expect((await fetch(`${url}/__sandbox/health`)).status).toBe(200);
      sandgate.child.kill("SIGKILL");
      await Promise.allSettled(pending);
    } finally {
      sandgate.child.kill("SIGKILL");
      for (const s of sockets) s.destroy();
      silent.close();
    }
  }, 30_000);
});

describe("the verify thread's ceilings", () => {
  test("a recording that needs more memory than the thread may use is refused as verify_out_of_memory; the process goes on", async () => {
    const har = await recording();
    const answer = await verifyInThread(Buffer.from(hostile(har, 3_000_000)), {}, { memoryMb: 24, timeoutMs: 30_000 });
    expect(answer).toMatchObject({ error: "verify_out_of_memory" });
    expect((answer as { message: string }).message).toContain("24 MB");
  }, 30_000);

  test("a replay longer than the time limit is stopped and answered as verify_timed_out", async () => {
    const har = await recording();
    const answer = await verifyInThread(Buffer.from(JSON.stringify(har)), {}, { memoryMb: 256, timeoutMs: 50 });
    expect(answer).toMatchObject({ error: "verify_timed_out" });
  });
});

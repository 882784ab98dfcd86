// A real Redis for the shared-store tests and the bench: Debian's redis-server, started on a free
// port with its own folder (append-only file on, fsync every second as Redis does by default, so a
// restart keeps what was written), stopped at the end.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const REDIS_SERVER = "/usr/bin/redis-server";
export const HAS_REDIS = existsSync(REDIS_SERVER);

export interface TestRedis {
  url: string;
  port: number;
  /** stops it (SIGTERM: the append-only file is flushed) */
  stop(): Promise<void>;
  /** starts it again on the same port and folder */
  start(): Promise<void>;
  /** stops it for good and removes its folder */
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something answers +PONG on the port. */
async function answering(port: number, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once("error", () => resolve(false));
      socket.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
      socket.once("data", (data) => {
        socket.destroy();
        resolve(data.toString().startsWith("+PONG"));
      });
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`redis-server did not answer on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "sandgate-redis-"));
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(REDIS_SERVER, ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes", "--save", ""], { stdio: "ignore" });
    await answering(port);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill("SIGTERM");
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

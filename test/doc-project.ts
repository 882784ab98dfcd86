// A merchant's project with Sandgate installed, as the shell scripts of the README and docs/ assume
// it: `npx sandgate …` in its folder runs this checkout (node_modules/.bin/sandgate starts
// src/main.ts through tsx, as spawnSandgate does; nothing is ever downloaded), and `sandgate` is on
// the PATH of its npm scripts. A script runs in its own process group, which is ended with it, so
// what the script started with `&` never outlives the test.
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const TSX = import.meta.resolve("tsx");

export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** the command lines of what the script started and left running 3 s after it ended (then ended by the test) */
  leftover: string[];
}

interface ScriptOptions {
  shell?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface DocProject {
  dir: string;
  /** writes an executable file of the project (a stand-in for the merchant's suite: vendor/bin/phpunit) */
  executable(path: string, text: string): void;
  file(path: string, text: string): void;
  /** runs a script with `shell` in the project's folder; its process group is ended when it exits or after `timeoutMs` */
  run(script: string, options?: ScriptOptions): Promise<ScriptRun>;
  /** the same, for a script that serves: `stop()` ends its process group (SIGTERM), then resolves as `done` does */
  start(script: string, options?: ScriptOptions): { done: Promise<ScriptRun>; stop(): Promise<ScriptRun> };
  close(): void;
}

export function docProject(): DocProject {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-doc-project-"));
  const bin = join(dir, "node_modules", ".bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "shop", private: true, type: "module" }));
  const file = (path: string, text: string) => {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  const executable = (path: string, text: string) => {
    file(path, text);
    chmodSync(join(dir, path), 0o755);
  };
  executable("node_modules/.bin/sandgate", `#!/bin/sh\nexec "${process.execPath}" --import "${TSX}" "${join(ROOT, "src", "main.ts")}" "$@"\n`);
  // vitest's BASE_URL ("/") and the test run's own settings are not the scripts' environment
  const { BASE_URL: _b, ADMIN_TOKEN: _a, SANDGATE_URL: _s, PORT: _p, ...inherited } = process.env;
  function start(script: string, options: ScriptOptions = {}) {
    const child = spawn(options.shell ?? "bash", ["-c", script], { cwd: dir, detached: true, env: { ...inherited, LOG_LEVEL: "warn", ...options.env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const endGroup = () => {
      try {
        process.kill(-child.pid!, "SIGTERM");
      } catch {
        // the group has ended already
      }
    };
    const timer = setTimeout(endGroup, options.timeoutMs ?? 60_000);
    const done = new Promise<ScriptRun>((resolve) => {
      child.on("exit", (code) => {
        clearTimeout(timer);
        void leftIn(child.pid!).then((leftover) => {
          endGroup();
          if (child.stdout.closed && child.stderr.closed) resolve({ code, stdout, stderr, leftover });
          else child.on("close", () => resolve({ code, stdout, stderr, leftover }));
        });
      });
    });
    return {
      done,
      stop: () => {
        endGroup();
        return done;
      },
    };
  }
  return {
    dir,
    file,
    executable,
    start,
    run: (script, options) => start(script, options).done,
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The processes of a group still running after a grace of 20 s (a parent's stop takes a moment to reach its children; on a loaded machine, longer). */
async function leftIn(group: number): Promise<string[]> {
  let left: string[] = [];
  for (const started = Date.now(); Date.now() - started < 20_000; await new Promise((r) => setTimeout(r, 100))) {
    left = readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .flatMap((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
          const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
          // fields[2] is the process group; a zombie (Z) has ended
          return Number(fields[2]) === group && fields[0] !== "Z" ? [readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim()] : [];
        } catch {
          return [];
        }
      });
    if (!left.length) break;
  }
  return left;
}

/** Resolves once GET /__sandbox/health answers 200 on the port; fails if the script serving it ends first, or after `timeoutMs`. */
export async function untilHealthy(port: number, done: Promise<ScriptRun>, timeoutMs = 90_000): Promise<void> {
  let ended: ScriptRun | undefined;
  void done.then((run) => (ended = run));
  for (const until = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 200))) {
    const ok = await fetch(`http://127.0.0.1:${port}/__sandbox/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (ended) throw new Error(`the script ended (exit ${ended.code}) before port ${port} answered:\n${ended.stdout}\n${ended.stderr}`);
    if (Date.now() > until) throw new Error(`port ${port} did not answer /__sandbox/health in ${timeoutMs} ms`);
  }
}

/** A script with every whole-word occurrence of each port replaced (8080 → a free port). */
export function withPorts(script: string, ports: Record<number, number>): string {
  return script.replace(/\b\d{4,5}\b/g, (n) => String(ports[Number(n)] ?? n));
}

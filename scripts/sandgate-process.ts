// `sandgate …` as its own process: from its TypeScript sources (src/main.ts through tsx), or, with
// `built`, as `npm start`, `npx sandgate` and the Docker image run it (dist/sandgate.js with the
// start flags). The server, `sandgate record`, `sandgate verify`. One helper for the tests and the
// self-check script.
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";
import { NODE_FLAGS } from "./node-flags.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface SandgateProcess {
  child: ChildProcessWithoutNullStreams;
  /** the URL its "listening on" line names; rejects if it exits first */
  url: Promise<string>;
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
}

export interface SpawnOptions {
  /** added to this process's environment (LOG_LEVEL is warn unless set here) */
  env?: Record<string, string>;
  /** node's own flags, before the script */
  nodeFlags?: string[];
  /** the Sandgate tree to run (default: this one); an earlier commit's, for its formats */
  cwd?: string;
  /** run the bundle a team's shared instance runs (call ensureBuilt() first), not the sources */
  built?: boolean;
}

/** Compiles dist/ if a source is newer than it (scripts/build-if-stale.mjs), for `built` processes. */
export function ensureBuilt(): void {
  execFileSync(process.execPath, ["scripts/build-if-stale.mjs"], { cwd: ROOT, stdio: "inherit" });
}

export function spawnSandgate(args: string[], options: SpawnOptions = {}): SandgateProcess {
  // vitest puts Vite's BASE_URL ("/") in the environment: it is not a setting for the child
  const { BASE_URL: _vite, ...inherited } = process.env;
  const entry = options.built ? [...NODE_FLAGS, "dist/sandgate.js"] : ["--import", "tsx", "src/main.ts"];
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), ...entry, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...inherited, LOG_LEVEL: "warn", ...options.env },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", () => {
      const m = /listening on (http:\/\/[^\s,]+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`exited ${code} before listening: ${err}`)));
  });
  // a process that never listens (--version, verify) must not leave an unhandled rejection
  url.catch(() => undefined);
  return { child, url, exited, stdout: () => out, stderr: () => err };
}

/** Runs a command that ends (verify, --help, --version) and resolves with its code and output once its streams close. */
export function runSandgate(args: string[], options: SpawnOptions = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawnSandgate(args, options);
  return new Promise((resolve) => proc.child.on("close", (code) => resolve({ code, stdout: proc.stdout(), stderr: proc.stderr() })));
}

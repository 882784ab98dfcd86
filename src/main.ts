// The only file that listens and handles signals: `npm start`, `npx sandgate`, the Docker image.
import cluster from "node:cluster";
import { exposureWarning, tokenWarning } from "./config/exposure.js";
import { availableParallelism } from "node:os";
import { parseCommandLine } from "./cli/command-line.js";
import { stopWithParent } from "./cli/stop-with-parent.js";
import { endWith, quietOnClosedOutput } from "./cli/command.js";
import type { Config } from "./config/config.js";

/** `sandgate record …`, `sandgate verify …`: the proof commands, and `sandgate ctl …` (src/cli/), each with its own flags. */
const COMMANDS: Record<string, () => Promise<{ run(args: string[]): Promise<number | undefined> }>> = {
  record: () => import("./cli/record.js"),
  verify: () => import("./cli/verify-command.js"),
  "check-receiver": () => import("./cli/check-receiver.js"),
  listen: () => import("./cli/listen.js"),
  ctl: () => import("./cli/ctl.js"),
  state: () => import("./cli/state-command.js"),
  migrate: () => import("./cli/migrate.js"),
};

async function main(): Promise<void> {
  const [first, ...rest] = process.argv.slice(2);
  const command = first === undefined ? undefined : COMMANDS[first];
  if (command) {
    quietOnClosedOutput();
    const code = await (await command()).run(rest);
    // a command that serves (record) returns undefined and stops on its own signal
    if (code !== undefined) endWith(code);
    return;
  }
  const config = parseCommandLine(process.argv.slice(2), process.env);
  const workers = config.workers === "auto" ? availableParallelism() : Number(config.workers);
  if (cluster.isPrimary) {
    // once, not per worker
    for (const warning of [exposureWarning(config), tokenWarning(config)]) if (warning) process.stderr.write(`sandgate: warning: ${warning}\n`);
  }
  if (workers > 1 && cluster.isPrimary) return superviseWorkers(workers, config);
  // loaded here, not above: `sandgate ctl` (a CI job may run it dozens of times) never needs the server
  const { startSandbox } = await import("./server/sandbox.js");
  const sandbox = await startSandbox(config);
  const { log } = sandbox.deps;
  log.info({ url: sandbox.url, scenario: config.scenario, data: config.redisUrl ? "redis" : (config.data ?? "memory") }, "sandgate ready");
  const ready = `Sandgate listening on ${sandbox.url} (scenario ${config.scenario}, signatures ${config.signatureMode})`;
  // a worker tells the primary, which says it once for all of them
  if (cluster.isWorker) process.send?.({ ready });
  else process.stdout.write(`${ready}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping");
    // in-flight notification attempts may take up to their 5 s timeout
    const force = setTimeout(() => process.exit(1), 8_000);
    force.unref();
    sandbox.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  // a worker always stops with its primary
  if (!config.keepRunning || cluster.isWorker) stopWithParent(() => stop("parent gone"));
}

/**
 * --workers N: N processes serve the one port (node:cluster hands connections round-robin); they
 * share state through Redis, so they are replicas like any other. One that dies is replaced.
 */
function superviseWorkers(count: number, config: Config): void {
  let readyCount = 0;
  let stopping = false;
  const fork = () => {
    const worker = cluster.fork();
    worker.on("message", (message: { ready?: string }) => {
      if (message.ready && ++readyCount === count) process.stdout.write(`${message.ready.replace(/ \(/, ` (${count} workers, `)}\n`);
    });
  };
  for (let i = 0; i < count; i++) fork();
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) {
      if (!Object.keys(cluster.workers ?? {}).length) process.exit(0);
      return;
    }
    process.stderr.write(`sandgate: worker ${worker.process.pid} stopped (${signal ?? `exit ${code}`})${readyCount ? "; starting another" : ""}\n`);
    // a worker that fails before it ever listened (Redis unreachable, say) would fail again: stop
    if (readyCount === 0) process.exit(1);
    fork();
  });
  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGTERM");
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  if (!config.keepRunning) stopWithParent(stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`sandgate: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

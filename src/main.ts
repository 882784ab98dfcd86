// The only file that listens and handles signals: `npm start`, `npx sandgate`, the Docker image.
// first: the heap settings apply before anything else is loaded
import "./heap.js";
import { parseCommandLine } from "./cli.js";
import { startSandbox } from "./sandbox.js";

async function main(): Promise<void> {
  const config = parseCommandLine(process.argv.slice(2), process.env);
  const sandbox = await startSandbox(config);
  const { log } = sandbox.deps;
  log.info({ url: sandbox.url, scenario: config.scenario, data: config.data ?? "memory" }, "sandgate ready");
  process.stdout.write(`Sandgate listening on ${sandbox.url} (scenario ${config.scenario}, signatures ${config.signatureMode})\n`);
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
  if (!config.keepRunning) stopWithParent(() => stop("parent gone"));
}

/**
 * `npx sandgate &` then `kill $!` stops npx, not the node process it started: that process would
 * be re-parented (to PID 1 or a subreaper) and keep answering after a CI job's clean-up. So the
 * server stops when its parent changes. In a container Sandgate is PID 1 (parent 0): nothing to watch.
 */
function stopWithParent(stop: () => void): void {
  const parent = process.ppid;
  if (parent <= 1) return;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 500).unref();
}

main().catch((err: unknown) => {
  process.stderr.write(`sandgate: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

// `npx sandgate &` then `kill $!` (or `kill -INT $!`) stops npx, not the node process it started,
// and npx does not pass the signal on: that process would be re-parented (to PID 1 or a subreaper)
// and keep running after a CI job's clean-up. So a long-running command (the server, `sandgate
// record`) stops when its parent changes. In a container Sandgate is PID 1 (parent 0): nothing to watch.

/**
 * The parent the process started under, read as this module loads (at start, before anything is
 * awaited). Read once the command is ready, it may already be PID 1: a script that kills npx the
 * moment the command says it listens, on a busy machine, left the recorder running for good.
 */
const startedUnder = process.ppid;

export function stopWithParent(stop: () => void): void {
  if (startedUnder <= 1) return;
  const check = () => {
    if (process.ppid !== startedUnder) stop();
  };
  setInterval(check, 500).unref();
  check();
}

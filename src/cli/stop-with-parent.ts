// `npx sandgate &` then `kill $!` (or `kill -INT $!`) stops npx, not the node process it started,
// and npx does not pass the signal on: that process would be re-parented (to PID 1 or a subreaper)
// and keep running after a CI job's clean-up. So a long-running command (the server, `sandgate
// record`) stops when its parent changes. In a container Sandgate is PID 1 (parent 0): nothing to watch.
export function stopWithParent(stop: () => void): void {
  const parent = process.ppid;
  if (parent <= 1) return;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 500).unref();
}

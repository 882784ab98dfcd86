// Starts one Sandgate for the suite, the way a merchant's CI would: in-process, on a free port,
// signatures checked (strict), then hands its URL to the tests and stops it at the end. With
// SANDGATE_URL set (compose.yaml), the suite uses that Sandgate instead.
import { startSandbox, type Sandbox } from "sandgate";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    sandgateUrl: string;
  }
}

let sandbox: Sandbox | undefined;

export async function setup(project: TestProject): Promise<void> {
  // one already running (compose.yaml's sandgate service, a CI job's container): the suite uses it
  if (process.env.SANDGATE_URL) return project.provide("sandgateUrl", process.env.SANDGATE_URL.replace(/\/+$/, ""));
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1", signatureMode: "strict", seed: "merchant-example" });
  project.provide("sandgateUrl", sandbox.url);
}

export async function teardown(): Promise<void> {
  await sandbox?.close();
}

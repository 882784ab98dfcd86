// Starts one Sandgate for the suite, the way a merchant's CI would: in-process, on a free port,
// signatures checked (strict), then hands its URL to the tests and stops it at the end.
import { startSandbox, type Sandbox } from "sandgate";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    sandgateUrl: string;
  }
}

let sandbox: Sandbox | undefined;

export async function setup(project: TestProject): Promise<void> {
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1", signatureMode: "strict", seed: "merchant-example" });
  project.provide("sandgateUrl", sandbox.url);
}

export async function teardown(): Promise<void> {
  await sandbox?.close();
}

// The programmatic API: `import { startSandbox } from "sandgate"`.
export { startSandbox, createDeps, type Sandbox, type SandboxOptions } from "./sandbox.js";
export { createAdminClient, SandgateAdminError, type AdminClient, type CompletedPayment, type ReceiverCheckInput, type ScenarioList } from "./client.js";
export type { ProbeResult, ReceiverCheckReport, SendResult } from "./receiver-check/run.js";
export { createApp } from "./app.js";
export { DEFAULTS, OPTIONS, type Config } from "./config.js";

// The programmatic API: `import { startSandbox } from "sandgate"`.
export { startSandbox, createDeps, type Sandbox, type SandboxOptions } from "./server/sandbox.js";
export { createAdminClient, SandgateAdminError, type AdminClient, type CompletedPayment, type ReceiverCheckInput, type ScenarioList } from "./api/client.js";
export type { ProbeResult, ReceiverCheckReport, SendResult } from "./receiver-check/run.js";
export { createApp } from "./server/app.js";
export { DEFAULTS, OPTIONS, type Config } from "./config/config.js";

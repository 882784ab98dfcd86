// Global setup of the "replicas (cluster)" project: the replicas suites on a 3-master Redis Cluster.
import type { TestProject } from "vitest/node";
import { setupReplicas } from "./replica-setup.js";

export default (project: TestProject) => setupReplicas(project, true);

// `import { SandgateContainer } from "sandgate/testcontainers"`: Sandgate's image as a Testcontainers
// container (testcontainers is an optional peer dependency: install it beside sandgate). It starts
// the image (built from this repository: no public one is published), waits for its health check,
// and gives the gateway's URL and a typed operator client.
import { AbstractStartedContainer, GenericContainer, Wait, type StartedTestContainer } from "testcontainers";
import { createAdminClient, type AdminClient } from "./api/client.js";

/** The port Sandgate listens on in its image (the Dockerfile's PORT). */
const PORT = 8080;

export class SandgateContainer extends GenericContainer {
  private adminToken: string | undefined;

  /** `image`: the name you built it under (docker build -t sandgate .) */
  constructor(image = "sandgate") {
    super(image);
    this.withExposedPorts(PORT).withWaitStrategy(Wait.forHealthCheck()).withStartupTimeout(60_000);
  }

  /** the global scenario at start (SCENARIO) */
  withScenario(name: string): this {
    return this.withEnvironment({ SCENARIO: name });
  }

  /** lenient (any well-formed encryption_data) or strict (SIGNATURE_MODE) */
  withSignatureMode(mode: "lenient" | "strict"): this {
    return this.withEnvironment({ SIGNATURE_MODE: mode });
  }

  /** the operator API and dashboard behind a token (ADMIN_TOKEN); the client sends it */
  withAdminToken(token: string): this {
    this.adminToken = token;
    return this.withEnvironment({ ADMIN_TOKEN: token });
  }

  override async start(): Promise<StartedSandgateContainer> {
    return new StartedSandgateContainer(await super.start(), this.adminToken);
  }
}

export class StartedSandgateContainer extends AbstractStartedContainer {
  /** the gateway as the host reaches it: http://<host>:<mapped port> (point your integration here) */
  readonly url: string;
  /** the operator API as typed calls (scenarios, the clock, completions, coverage, ...) */
  readonly admin: AdminClient;

  constructor(started: StartedTestContainer, adminToken?: string) {
    super(started);
    this.url = `http://${started.getHost()}:${started.getMappedPort(PORT)}`;
    this.admin = createAdminClient(this.url, adminToken);
  }
}

import { createSandbox } from "@sbx/core";
import { dockerContainer } from "@sbx/docker";

/**
 * The escape hatch, kept as code so the consumer check type-checks it against the published declarations (strict,
 * without skipLibCheck). `dockerContainer(sandbox)` is the dockerode `Container`: Docker only, outside the portable
 * contract, and nothing done through it is in the audit record.
 */
export async function containerMemoryLimit(): Promise<number | undefined> {
  await using sandbox = await createSandbox("docker://python:3.12-slim", { limits: { memoryMiB: 256 } });
  const details = await dockerContainer(sandbox).inspect();
  return details.HostConfig.Memory;
}

import { createSandbox } from "@sbx/core";
import { dockerContainer } from "@sbx/docker";

/**
 * The create options of the hardened container @sbx/docker makes, read back from a real one through the escape
 * hatch (`dockerContainer`), so the raw dockerode side of a benchmark creates the same container without sbx. The
 * adapter's own labels are replaced by `labels`, so sbx's sweeper never mistakes the raw container for a sandbox.
 */
export async function adapterContainerConfig(provider, labels) {
  const sandbox = await createSandbox(provider, { metadata: { bench: "template" } });
  try {
    const info = await dockerContainer(sandbox).inspect();
    const { Hostname: _hostname, Labels: _labels, ...config } = info.Config;
    return { ...config, Labels: labels, HostConfig: info.HostConfig };
  } finally {
    await sandbox.kill();
  }
}

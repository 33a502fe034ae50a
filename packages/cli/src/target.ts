import { autoBackendOrder, detectBackends, parseTarget, registerProvider, type CreateSandboxOptions } from "@sbx/core";
import { createSandboxProvider as createAppleContainerProvider } from "@sbx/apple-container";
import { createSandboxProvider as createDockerProvider } from "@sbx/docker";
import { createSandboxProvider as createFakeProvider } from "@sbx/fake";
import { BackendUnavailableError } from "@sbx/core";

let registered = false;

/**
 * Registers the adapters the CLI ships with, so `docker://`, `apple-container://` and `fake://` resolve wherever `sbx` is run from
 * (core otherwise imports `@sbx/<scheme>` next to itself or the working directory). Other schemes (e2b, third
 * party) still load the ordinary way.
 */
export function registerBundledAdapters(): void {
  if (registered) return;
  registered = true;
  registerProvider("docker", (settings) => createDockerProvider(settings));
  registerProvider("apple-container", (settings) => createAppleContainerProvider(settings));
  registerProvider("fake", (settings) => createFakeProvider(settings));
}

/** The target to use: `--target`, else `SBX_TARGET`, else `"auto"`. */
export function requestedTarget(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  return flag ?? env.SBX_TARGET ?? "auto";
}

/**
 * Turns `"auto"` into a concrete target (the first usable backend in `autoBackendOrder()`, or the fake with `allowFake`),
 * so the CLI can say which backend it picked and pass backend settings (pull progress) to it.
 */
export async function resolveTarget(
  target: string,
  options: { allowFake: boolean; signal?: AbortSignal; env?: Readonly<Record<string, string | undefined>> },
): Promise<string> {
  if (target.toLowerCase() !== "auto") {
    parseTarget(target);
    return target;
  }
  const statuses = await detectBackends({ signal: options.signal });
  // The same order as createSandbox("auto"): SBX_BACKENDS if set, else docker, e2b, modal and registered isolating backends.
  for (const backend of autoBackendOrder({ allowFake: options.allowFake, environment: options.env })) {
    if (statuses.find((status) => status.backend === backend)?.usable) return `${backend}://`;
  }
  const unusable = statuses.filter((status) => status.isolating);
  throw new BackendUnavailableError({
    backend: "auto",
    remedy: `${unusable.map((status) => `${status.backend}: ${status.remedy}`).join(" ")} Or pass --target fake:// (not a security boundary).`,
    message: `No isolating backend is usable here (${unusable.map((status) => `${status.backend}: ${status.reason}`).join("; ")}).`,
  });
}

/** Backend settings the CLI adds for a target: pull progress for Docker. */
export function progressSettings(
  target: string,
  onPullProgress: (event: { status: string; id?: string; progressDetail?: { current?: number; total?: number } }) => void,
): CreateSandboxOptions["settings"] {
  return parseTarget(target).scheme === "docker" ? { onPullProgress } : {};
}

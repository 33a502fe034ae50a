/**
 * Test gating shared by the emulators' own tests and the adapters' emulator tests: a missing Docker Engine or test
 * image skips them loudly, unless `SBX_REQUIRE` names the backend (CI), where it fails the run instead.
 */
import Docker from "dockerode";
import { afterAll, beforeAll } from "vitest";

/** True when `SBX_REQUIRE` (comma-separated) names `backend`. */
export function isRequired(backend: string): boolean {
  return (process.env.SBX_REQUIRE ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .includes(backend);
}

async function whyDockerIsUnusable(image: string): Promise<string | undefined> {
  const docker = new Docker();
  try {
    await docker.ping();
  } catch (error) {
    return `Docker is not reachable (${(error as Error).message})`;
  }
  try {
    await docker.getImage(image).inspect();
  } catch {
    return `image ${image} is not present (built by .ci/provision.sh; the emulator never pulls)`;
  }
  return undefined;
}

/**
 * Decides whether Docker-backed tests run: resolves `true` (skip) with a warning naming `label` when Docker or
 * `image` is missing; throws instead when `SBX_REQUIRE` names `backend`.
 */
export async function shouldSkipDockerTests(options: { image: string; backend: string; label: string }): Promise<boolean> {
  const reason = await whyDockerIsUnusable(options.image);
  if (reason && isRequired(options.backend)) throw new Error(`SBX_REQUIRE contains "${options.backend}" but ${reason}`);
  if (reason) console.warn(`[${options.label}] skipped: ${reason}`);
  return reason !== undefined;
}

/** The emulator a test file shares, or why there is none. */
export interface SharedEmulator<Emulator> {
  /** The running emulator (set in `beforeAll`); undefined when it could not start. */
  readonly emulator: Emulator | undefined;
  /** Why the emulator could not start (for `context.skip`). */
  readonly unavailable: string | undefined;
}

/**
 * Starts one emulator for the calling test file (or describe block) in `beforeAll` and stops it in `afterAll`. When
 * it cannot start, the tests skip loudly (a warning naming `label`), or the file fails when `SBX_REQUIRE` names
 * `backend`.
 */
export function shareEmulator<Emulator extends { stop(): Promise<void> }>(options: {
  start: () => Promise<Emulator>;
  backend: string;
  label: string;
}): SharedEmulator<Emulator> {
  const shared: { emulator: Emulator | undefined; unavailable: string | undefined } = { emulator: undefined, unavailable: undefined };
  beforeAll(async () => {
    try {
      shared.emulator = await options.start();
    } catch (error) {
      shared.unavailable = error instanceof Error ? error.message : String(error);
      if (isRequired(options.backend)) throw error;
      console.warn(`[${options.label}] SKIPPING: the emulator could not start: ${shared.unavailable}`);
    }
  });
  afterAll(async () => {
    await shared.emulator?.stop();
  });
  return shared;
}

/**
 * An audit record for drivers a test builds by hand around a raw SDK sandbox (every policy `enforcement: "test"`),
 * so such a driver can go through `createSandboxFromDriver` like the adapter's own.
 */
export function testDriverAudit() {
  const policy = () => ({ requested: null, applied: null, enforcement: "test" });
  return { backendVersion: "test", policies: { network: policy(), limits: policy(), mounts: policy(), user: policy(), lifetime: policy() } };
}

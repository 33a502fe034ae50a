/**
 * What both emulators do with the container behind one emulated sandbox (ADR 0041, ADR 0044): start it, prepare it,
 * read its address, remove it again when any of that fails; give it a PID 1 that ends it at a deadline kept in a file
 * (so a leaked container still ends if the emulator dies), and move that deadline when a sandbox takes the container.
 * Each emulator keeps what is its own: labels, the container's configuration, what preparing it means.
 */
import type Docker from "dockerode";
import { runExec } from "./docker-exec.js";

/** The labels an emulator puts on its containers, named after it (`"e2b-emulator"` gives `sbx.e2b-emulator`, …). */
export function emulatorLabels(emulator: string): { readonly emulator: string; readonly instance: string; readonly sandbox: string } {
  return { emulator: `sbx.${emulator}`, instance: `sbx.${emulator}.instance`, sandbox: `sbx.${emulator}.sandbox` };
}

/** What shapes every emulator's sandbox container (an emulator adds its own fields). */
export interface SandboxContainerShape {
  readonly docker: Docker;
  readonly image: string;
  /** The emulator instance that owns the container (its instance label). */
  readonly instanceId: string;
  /** `"none"` for no network at all, else the emulator's Docker network. */
  readonly networkMode: string;
}

/** A started and prepared container, not yet given to a sandbox. */
export interface PreparedContainer {
  /** The id of the sandbox this container will be (in its name and label). */
  readonly sandboxId: string;
  readonly container: Docker.Container;
  readonly containerId: string;
  /** Its address on the emulator's network; null without a network. */
  readonly containerAddress: string | null;
}

/** What `startPreparedContainer` needs besides the created container. */
export interface StartContainerOptions {
  /** The id of the sandbox the container will be. */
  readonly sandboxId: string;
  /** `"none"` for no network (no address), else the Docker network whose address is read. */
  readonly networkMode: string;
  /** Runs on the created container before it starts (files put into it as an archive). Default none. */
  readonly beforeStart?: (container: Docker.Container) => Promise<void>;
  /** Runs once the container started, before its address is read (a user account, helper files). Default none. */
  readonly prepare?: (container: Docker.Container) => Promise<void>;
}

/**
 * Starts a created container (after `beforeStart`), prepares it and reads its address on `networkMode`. Removes the
 * container when any step fails, and rethrows: a container that was not prepared is never handed out.
 */
export async function startPreparedContainer(container: Docker.Container, options: StartContainerOptions): Promise<PreparedContainer> {
  try {
    await options.beforeStart?.(container);
    await container.start();
    await options.prepare?.(container);
    let containerAddress: string | null = null;
    if (options.networkMode !== "none") {
      const information = await container.inspect();
      containerAddress = information.NetworkSettings.Networks[options.networkMode]?.IPAddress || null;
    }
    return { sandboxId: options.sandboxId, container, containerId: container.id, containerAddress };
  } catch (error) {
    await container.remove({ force: true }).catch(() => undefined);
    throw error;
  }
}

/**
 * A PID 1 command that writes `deadlineSeconds` (Unix seconds) to `deadlineFile` and sleeps until the deadline the
 * file then holds, so the container ends on time even if the emulator process dies; `writeDeadline` moves it.
 * `name` is the shell's `$0` (it shows in `ps`).
 */
export function deadlineCommand(options: { readonly deadlineFile: string; readonly name: string; readonly deadlineSeconds: number }): string[] {
  const { deadlineFile } = options;
  const script = `echo "$1" > ${deadlineFile}; while [ "$(date +%s)" -lt "$(cat ${deadlineFile} 2>/dev/null || echo 0)" ]; do sleep 1; done`;
  return ["/bin/sh", "-c", script, options.name, String(options.deadlineSeconds)];
}

/**
 * Moves the deadline a `deadlineCommand` PID 1 obeys (Unix seconds). Replaced by a rename, never rewritten in place:
 * PID 1 reading the file between its truncation and the write would see no deadline and end the container under the
 * sandbox.
 */
export async function writeDeadline(
  container: Docker.Container,
  options: { readonly deadlineFile: string; readonly deadlineSeconds: number },
): Promise<void> {
  const { deadlineFile, deadlineSeconds } = options;
  const written = await runExec(container, {
    command: ["/bin/sh", "-c", `echo ${deadlineSeconds} > ${deadlineFile}.new && mv ${deadlineFile}.new ${deadlineFile}`],
    user: "root",
  });
  if (written.exitCode !== 0) throw new Error(`could not set the sandbox's deadline (exit ${written.exitCode}): ${written.stderr.toString("utf8")}`);
}

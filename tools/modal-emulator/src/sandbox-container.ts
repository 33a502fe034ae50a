/**
 * Starting the container behind one emulated Modal sandbox (ADR 0041): the container from the image with its working
 * folder, network mode and resources, the emulator's fs tool and pid folder in it. What belongs to one sandbox (its
 * deadline, its firewall rules, its environment, given to every exec) is applied when a sandbox takes it, so a
 * container started ahead of demand serves any create of the same shape that keeps the default entrypoint.
 */
import type Docker from "dockerode";
import {
  deadlineCommand,
  emulatorLabels,
  startPreparedContainer,
  type SandboxContainerShape,
  writeDeadline as writeDeadlineFile,
  type PreparedContainer,
} from "@sbx/emulator-kit";
import { PID_FOLDER } from "./emulated-exec.js";
import { FS_TOOLS_PATH, FS_TOOLS_SOURCE } from "./fs-tools-script.js";
import { createTarArchive } from "./tar-archive.js";

const LABELS = emulatorLabels("modal-emulator");
/** Label put on every container the emulator creates. */
export const EMULATOR_LABEL = LABELS.emulator;
/** Label holding the id of the emulator instance that owns the container. */
export const EMULATOR_INSTANCE_LABEL = LABELS.instance;

/** File inside the container holding the backstop deadline (Unix seconds) that the default PID 1 obeys. */
export const DEADLINE_FILE = "/__modal/deadline";

export type { PreparedContainer } from "@sbx/emulator-kit";

/** What shapes a sandbox container. */
export interface ContainerShape extends SandboxContainerShape {
  readonly workdir: string | undefined;
  readonly nanoCpus: number | undefined;
  readonly memoryBytes: number | undefined;
}

/** The key of a shape, for the warm container pool (the sandbox id's form is part of it: V1 and V2 ids differ). */
export function shapeKey(shape: ContainerShape, idForm: string): string {
  return JSON.stringify([shape.image, shape.networkMode, shape.workdir ?? null, shape.nanoCpus ?? null, shape.memoryBytes ?? null, idForm]);
}

/**
 * The default PID 1: sleeps until the deadline in DEADLINE_FILE (first `$1`), so a leaked container still ends if the
 * emulator dies; a sandbox taking a container started ahead of demand moves it.
 */
export function lifetimeCommand(deadlineSeconds: number): string[] {
  return deadlineCommand({ deadlineFile: DEADLINE_FILE, name: "modal-emulator-lifetime", deadlineSeconds });
}

/**
 * Creates and starts a container for `sandboxId` running `command` as PID 1, with `environment` (the sandbox's, for
 * an entrypoint of its own; a default PID 1 needs none, every exec gets it). Removes the container when it fails.
 */
export async function prepareContainer(
  shape: ContainerShape,
  sandboxId: string,
  command: string[],
  environment: Record<string, string>,
): Promise<PreparedContainer> {
  const container = await shape.docker.createContainer({
    Image: shape.image,
    name: `modal-emulator-${sandboxId.slice(-36)}`,
    Entrypoint: [],
    Cmd: command,
    WorkingDir: shape.workdir,
    Env: Object.entries(environment).map(([key, value]) => `${key}=${value}`),
    Labels: { [EMULATOR_LABEL]: "1", [EMULATOR_INSTANCE_LABEL]: shape.instanceId, [LABELS.sandbox]: sandboxId },
    HostConfig: {
      Init: true,
      NetworkMode: shape.networkMode,
      ...(shape.nanoCpus ? { NanoCpus: shape.nanoCpus } : {}),
      ...(shape.memoryBytes ? { Memory: shape.memoryBytes, MemorySwap: shape.memoryBytes } : {}),
    },
  });
  return startPreparedContainer(container, { sandboxId, networkMode: shape.networkMode, beforeStart: putModalFiles });
}

/** Puts the emulator's folders and fs tool into a created container, before it starts. */
async function putModalFiles(container: Docker.Container): Promise<void> {
  await container.putArchive(
    createTarArchive([
      { path: "__modal", mode: 0o755 },
      { path: "__modal/.bin", mode: 0o755 },
      { path: PID_FOLDER.slice(1), mode: 0o1733 },
      { path: FS_TOOLS_PATH.slice(1), mode: 0o755, content: Buffer.from(FS_TOOLS_SOURCE, "utf8") },
    ]),
    { path: "/" },
  );
}

/** Moves the backstop deadline the default PID 1 obeys (Unix seconds), by a rename (see the kit's `writeDeadline`). */
export function writeDeadline(container: Docker.Container, deadlineSeconds: number): Promise<void> {
  return writeDeadlineFile(container, { deadlineFile: DEADLINE_FILE, deadlineSeconds });
}

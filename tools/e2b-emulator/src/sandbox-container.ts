/**
 * Starting and preparing the container behind one emulated sandbox, before it is given to a sandbox (ADR 0041): the
 * container from the image, its user account and code interpreter driver, its address. What belongs to one sandbox
 * (its deadline, its firewall rules, its environment, given to every process it starts) is applied when a sandbox
 * takes it, so a container prepared ahead of demand serves any create with the same image and network mode.
 */
import type Docker from "dockerode";
import {
  deadlineCommand,
  emulatorLabels,
  runExec,
  startPreparedContainer,
  type SandboxContainerShape,
  writeDeadline as writeDeadlineFile,
  type PreparedContainer,
} from "@sbx/emulator-kit";
import { codeInterpreterDriverPath, codeInterpreterDriverSource } from "./code-interpreter.js";

const LABELS = emulatorLabels("e2b-emulator");
/** Label put on every container the emulator creates. */
export const EMULATOR_LABEL = LABELS.emulator;
/** Label holding the id of the emulator instance that owns the container. */
export const EMULATOR_INSTANCE_LABEL = LABELS.instance;
/** Label holding the emulated sandbox id. */
export const SANDBOX_ID_LABEL = LABELS.sandbox;

/** File inside the container holding the lifetime deadline (Unix seconds) that PID 1's loop obeys. */
export const DEADLINE_FILE = "/run/e2b-emulator-deadline";

/** Default unprivileged user, as in E2B templates. */
export const DEFAULT_USER = "user";

export type { PreparedContainer } from "@sbx/emulator-kit";

/** What shapes a sandbox container: the same for every sandbox with this image and network mode. */
export type ContainerShape = SandboxContainerShape;

/** The key of a shape, for the warm container pool. */
export function shapeKey(shape: ContainerShape): string {
  return `${shape.image}\n${shape.networkMode}`;
}

/**
 * Creates, starts and prepares a container for `sandboxId`, whose PID 1 ends it at `deadlineSeconds` (Unix seconds)
 * unless the file it reads is moved. Removes the container again when preparing fails.
 */
export async function prepareContainer(shape: ContainerShape, sandboxId: string, deadlineSeconds: number): Promise<PreparedContainer> {
  const container = await shape.docker.createContainer({
    Image: shape.image,
    name: `e2b-emulator-${sandboxId}`,
    Cmd: deadlineCommand({ deadlineFile: DEADLINE_FILE, name: "e2b-emulator-lifetime", deadlineSeconds }),
    WorkingDir: "/",
    Labels: {
      [EMULATOR_LABEL]: "1",
      [EMULATOR_INSTANCE_LABEL]: shape.instanceId,
      [SANDBOX_ID_LABEL]: sandboxId,
    },
    HostConfig: {
      AutoRemove: true,
      Init: true,
      NetworkMode: shape.networkMode,
    },
  });
  return startPreparedContainer(container, { sandboxId, networkMode: shape.networkMode, prepare: addUserAndInterpreterDriver });
}

/** Adds the default user (as in E2B templates) and the code interpreter's driver to a started container, as root. */
async function addUserAndInterpreterDriver(container: Docker.Container): Promise<void> {
  const setupScript = [
    `id -u ${DEFAULT_USER} >/dev/null 2>&1 || useradd -m -u 1000 -s /bin/bash ${DEFAULT_USER} 2>/dev/null || {`,
    `  echo '${DEFAULT_USER}:x:1000:1000::/home/${DEFAULT_USER}:/bin/bash' >> /etc/passwd;`,
    `  echo '${DEFAULT_USER}:x:1000:' >> /etc/group; }`,
    `mkdir -p /home/${DEFAULT_USER} && chown ${DEFAULT_USER}: /home/${DEFAULT_USER}`,
    `mkdir -p "$(dirname ${codeInterpreterDriverPath})"`,
    `cat > ${codeInterpreterDriverPath}`,
  ].join("\n");
  const setup = await runExec(container, {
    command: ["/bin/sh", "-c", setupScript],
    user: "root",
    stdinData: Buffer.from(codeInterpreterDriverSource, "utf8"),
  });
  if (setup.exitCode !== 0) {
    throw new Error(`sandbox setup failed (exit ${setup.exitCode}): ${setup.stderr.toString("utf8")}`);
  }
}

/** Moves the deadline PID 1 obeys (Unix seconds), by a rename (see the kit's `writeDeadline`). */
export function writeDeadline(container: Docker.Container, deadlineSeconds: number): Promise<void> {
  return writeDeadlineFile(container, { deadlineFile: DEADLINE_FILE, deadlineSeconds });
}

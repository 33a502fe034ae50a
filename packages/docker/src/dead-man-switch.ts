import type { Socket } from "node:net";
import type Docker from "dockerode";

/**
 * The host's half of the dead-man's switch: an attach to the (not yet started) container's stdin, held open for
 * the sandbox's life. The engine closes the container's stdin when this connection closes (`StdinOnce`), which is
 * what happens when the host process exits or is SIGKILLed; the root deadline then ends the container and
 * AutoRemove deletes it with its workspace volume. The socket is unref'd: it never keeps the host process alive.
 */
export async function holdDeadManSwitch(container: Docker.Container, signal?: AbortSignal): Promise<{ release(): void }> {
  const stream = (await container.attach({
    stream: true,
    stdin: true,
    stdout: false,
    stderr: false,
    hijack: true,
    abortSignal: signal,
  } as Docker.ContainerAttachOptions)) as unknown as Socket;
  stream.on("error", () => {});
  stream.on("data", () => {});
  (stream as Partial<Socket>).unref?.();
  (stream as { socket?: Partial<Socket> }).socket?.unref?.();
  return {
    release() {
      stream.destroy();
    },
  };
}

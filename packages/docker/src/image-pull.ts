import { ProviderError } from "@sbx/core";
import type Docker from "dockerode";
import { engineMessage } from "./map-docker-error.js";
import type { PullProgressEvent } from "./docker-settings.js";

/**
 * Has the engine pull an image, forwarding every progress event. The pull happens host-side, by the engine,
 * outside any sandbox: the registry traffic is the engine's, not the sandbox's.
 */
export async function pullImage(
  docker: Docker,
  image: string,
  options: { onProgress?: (event: PullProgressEvent) => void; signal?: AbortSignal },
): Promise<void> {
  let stream: NodeJS.ReadableStream;
  try {
    stream = (await docker.pull(image, { abortSignal: options.signal })) as NodeJS.ReadableStream;
  } catch (error) {
    throw new ProviderError({
      backend: "docker",
      cause: error,
      message: `The Docker Engine could not pull image ${JSON.stringify(image)}: ${engineMessage(error)}. Check the name, the registry's reachability from the engine, and any needed \`docker login\`.`,
    });
  }
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (error: Error | null, events: Array<{ error?: string }>) => {
        const failure = error?.message ?? events?.find((event) => event.error)?.error;
        if (failure)
          reject(
            new ProviderError({
              backend: "docker",
              cause: error,
              message: `The Docker Engine could not pull image ${JSON.stringify(image)}: ${failure}.`,
            }),
          );
        else resolve();
      },
      (event: { status?: string; id?: string; progressDetail?: { current?: number; total?: number } }) => {
        if (!options.onProgress) return;
        try {
          options.onProgress({ image, status: event.status ?? "", id: event.id, progressDetail: event.progressDetail });
        } catch {
          // A throwing listener must not break the pull.
        }
      },
    );
  });
}

import type Docker from "dockerode";

/** What the engine answers to a container create. */
export interface CreatedContainer {
  readonly Id: string;
  readonly Warnings: string[] | null;
}

/** POST /containers/create through the modem, to keep the engine's `Warnings` (dockerode drops them). */
export function createContainerRaw(docker: Docker, config: Docker.ContainerCreateOptions, signal?: AbortSignal): Promise<CreatedContainer> {
  return new Promise((resolve, reject) => {
    docker.modem.dial(
      {
        path: "/containers/create?",
        method: "POST",
        options: config,
        abortSignal: signal,
        statusCodes: { 200: true, 201: true, 400: "bad parameter", 404: "no such image", 409: "conflict", 500: "server error" },
      } as never,
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the engine's error, passed on unchanged to be mapped
      (error: unknown, data: unknown) => (error ? reject(error) : resolve(data as CreatedContainer)),
    );
  });
}

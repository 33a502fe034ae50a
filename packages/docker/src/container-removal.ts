import type Docker from "dockerode";
import { statusCodeOf } from "./map-docker-error.js";

/** Removes a container and its anonymous volumes; one already gone (404) or already being removed (409) is not an error. */
export function removeQuietly(container: Docker.Container): Promise<void> {
  return container.remove({ force: true, v: true }).then(
    () => undefined,
    (error: unknown) => {
      const status = statusCodeOf(error);
      if (status === 404 || status === 409) return;
      throw error;
    },
  );
}

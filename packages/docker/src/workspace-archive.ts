import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { ProviderError } from "@sbx/core";
import { helperEnvironment } from "@sbx/core/adapter";
import type Docker from "dockerode";
import { FILE_HELPER_GID } from "./file-helper.js";
import { startHelperExec, waitForExitCode } from "./helper-exec.js";
import { StreamDemuxer } from "./stream-demuxer.js";

/** Stderr kept from the archiving exec, for the error message. */
const STDERR_LIMIT_BYTES = 4096;

/**
 * Writes a tar of the sandbox's workspace into `file` on the host (ADR 0056). The archive is made inside the sandbox by
 * `tar` run as the sandbox's uid under the file helper's own group (ADR 0031): the workspace is read with exactly the
 * sandbox's rights, never by the engine's archive API as root, and the sandbox's code can neither trace nor signal the
 * exec. Members are relative (`./…`), links stored as links. Complete or an error: a non-zero exit (a file the sandbox
 * user cannot read, no `tar` in the image) or an archive past `maxBytes` (a sparse file can describe far more bytes
 * than the workspace holds) rejects with `ProviderError`, and the caller discards the file. A file that changes while it
 * is archived makes GNU tar exit 1, so the snapshot fails rather than keep a torn file (the container cannot be frozen
 * meanwhile: the archiving exec runs in its cgroup). Runs with core's helper environment (a fixed `PATH`, `LC_ALL=C`).
 */
export async function archiveWorkspace(
  container: Docker.Container,
  options: { readonly user: string; readonly workspace: string; readonly file: string; readonly maxBytes: number; readonly signal?: AbortSignal },
): Promise<{ sizeBytes: number }> {
  const helperUser = `${options.user.split(":")[0]}:${FILE_HELPER_GID}`;
  const argv = ["sh", "-c", 'cd "$1" && exec tar -cf - .', "sbx-snapshot", options.workspace];
  const env = Object.entries(helperEnvironment(options.workspace)).map(([name, value]) => `${name}=${value}`);
  const { exec, stream } = await startHelperExec(container, argv, { user: helperUser, env });
  const output = createWriteStream(options.file, { mode: 0o600 });
  let sizeBytes = 0;
  let stderr = "";
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure ??= error;
    stream.destroy();
  };
  const onAbort = () => fail(new ProviderError({ backend: "docker", message: "The snapshot was aborted while the workspace was being archived." }));
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const demuxer = new StreamDemuxer(
    (chunk) => {
      sizeBytes += chunk.byteLength;
      if (sizeBytes > options.maxBytes) {
        fail(
          new ProviderError({
            backend: "docker",
            message: `The workspace archive grew past ${options.maxBytes} bytes (the workspace's size plus headroom): a sparse or growing file; no snapshot was taken.`,
          }),
        );
        return;
      }
      if (!output.write(chunk)) {
        stream.pause();
        output.once("drain", () => stream.resume());
      }
    },
    (chunk) => {
      if (stderr.length < STDERR_LIMIT_BYTES)
        stderr += Buffer.from(chunk)
          .toString("utf8")
          .slice(0, STDERR_LIMIT_BYTES - stderr.length);
    },
  );
  try {
    await new Promise<void>((resolve) => {
      stream.on("data", (chunk: Buffer) => {
        if (failure === undefined) demuxer.push(chunk);
      });
      stream.once("end", () => resolve());
      stream.once("close", () => resolve());
      stream.once("error", (error: Error) => {
        fail(error);
        resolve();
      });
    });
    if (options.signal?.aborted) onAbort();
    if (failure) throw failure;
    if (demuxer.incomplete) throw new ProviderError({ backend: "docker", message: "The workspace archive ended in the middle of a frame." });
    const exitCode = await waitForExitCode(exec);
    if (exitCode !== 0)
      throw new ProviderError({
        backend: "docker",
        message: `Archiving the workspace failed (tar exited ${exitCode}): ${stderr.trim() || "no message"}; no snapshot was taken.`,
      });
    return { sizeBytes };
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    output.end();
    await once(output, "close").catch(() => {});
  }
}

import { execFile } from "node:child_process";
import type { StandinModes } from "./standin-modes.js";

/** What one docker CLI call returned. */
export interface DockerResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the docker CLI to completion (output bounded to 64 MiB), never throwing for a non-zero exit. */
export function docker(modes: StandinModes, args: readonly string[], input?: string): Promise<DockerResult> {
  return new Promise((resolve) => {
    const child = execFile(modes.docker, args, { maxBuffer: 64 * 1024 * 1024, encoding: "utf8" }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === "number" ? (error as { code: number }).code : 1) : 0;
      resolve({ exitCode: code, stdout, stderr: stderr || (error && code === 1 && !stderr ? error.message : stderr) });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** The Docker container name standing in for an Apple container id (a prefix keeps them apart from other containers). */
export function dockerNameOf(id: string): string {
  return `apple-standin-${id}`;
}

/** Labels every stand-in container carries: its namespace, its Apple id and its Apple configuration (JSON). */
export const LABEL_NAMESPACE = "dev.sbx.container-standin.namespace";
export const LABEL_ID = "dev.sbx.container-standin.id";
export const LABEL_CONFIGURATION = "dev.sbx.container-standin.configuration";

import { DEFAULT_PATH } from "../posix/posix-command.js";

/**
 * The environment core gives every spawn before the sandbox's `env`, its secrets and the command's `env` (each of
 * which overrides it): a portable `PATH`, `HOME` set to the workspace, and `LANG=C.UTF-8`. So a command sees the same
 * basics on every backend, whatever the image or host sets (ADR 0020). Pass `env: { PATH: … }` to use another PATH.
 */
export function defaultEnvironment(workspace: string): Record<string, string> {
  return { PATH: DEFAULT_PATH, HOME: workspace, LANG: "C.UTF-8" };
}

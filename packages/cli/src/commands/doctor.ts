import { detectBackends, type BackendStatus } from "@sbx/core";
import type { CliEnvironment, OutputMode } from "../terminal.js";
import { paint, table } from "../terminal.js";

/**
 * `sbx doctor`: which backends are usable here, and for each one that is not, why and what to do.
 * Exits 0 when at least one isolating backend is usable, 1 when none is (the fake does not count).
 */
export async function doctorCommand(environment: CliEnvironment, mode: OutputMode): Promise<number> {
  const statuses = (await detectBackends({ signal: environment.signal })).sort((left, right) => left.backend.localeCompare(right.backend));
  const isolatingUsable = statuses.some((status) => status.usable && status.isolating);
  if (mode.json) {
    environment.stdout.write(`${JSON.stringify({ ok: isolatingUsable, backends: statuses }, null, 2)}\n`);
    return isolatingUsable ? 0 : 1;
  }
  environment.stdout.write(renderDoctor(statuses, mode));
  return isolatingUsable ? 0 : 1;
}

/** The doctor table and verdict for some statuses (pure, for snapshot tests). */
export function renderDoctor(statuses: readonly BackendStatus[], mode: OutputMode): string {
  const isolatingUsable = statuses.some((status) => status.usable && status.isolating);
  const rows = statuses.map((status) => [
    status.backend,
    status.usable ? paint(mode.color, "green", "yes") : paint(mode.color, "red", "no"),
    status.isolating ? "yes" : "no (not a security boundary)",
    status.usable ? status.reason : `${status.reason}${status.remedy ? ` Remedy: ${status.remedy}` : ""}`,
  ]);
  let text = table(["BACKEND", "USABLE", "ISOLATING", "DETAIL"], rows);
  if (!mode.quiet) {
    text += isolatingUsable
      ? "\nAt least one isolating backend is usable.\n"
      : "\nNo isolating backend is usable here: follow a remedy above (the fake is for tests only).\n";
  }
  return text;
}

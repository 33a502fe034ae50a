// Renders the known-differences table (known-differences.json, the one source) into the Markdown files that show it,
// between the markers below. The differential suite checks that the rendered copies are current; after editing the
// JSON, rewrite them with: SBX_RENDER_DIFFERENCES=1 pnpm exec vitest run --project contract differential
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const START_MARKER = "<!-- known-differences:start (generated from contract-tests/differential/known-differences.json) -->";
export const END_MARKER = "<!-- known-differences:end -->";
/** Files that carry the table, relative to the repository root. */
export const TABLE_FILES = ["packages/fake/README.md", "docs/backends/fake.md"];
export const REPOSITORY_ROOT = join(here, "..", "..");

/** The table's entries. */
export function readKnownDifferences() {
  return JSON.parse(readFileSync(join(here, "known-differences.json"), "utf8"));
}

function cell(text) {
  return String(text).replaceAll("|", "\\|").replaceAll("\n", " ⏎ ");
}

/** The Markdown table (with its markers) for the given entries and corpus scripts (id → script text). */
export function renderTable(differences, scripts) {
  const lines = [
    START_MARKER,
    "| Corpus entry | Script | Differs in | Why |",
    "|---|---|---|---|",
    ...differences.map(
      (difference) =>
        `| \`${difference.id}\` | \`${cell(scripts[difference.id] ?? "?")}\` | ${difference.differsIn.join(", ")} | ${cell(difference.reason)} |`,
    ),
    END_MARKER,
  ];
  return lines.join("\n");
}

/** Replaces the table between the markers of a file's text; throws when the markers are missing. */
export function withTable(text, table) {
  const start = text.indexOf(START_MARKER);
  const end = text.indexOf(END_MARKER);
  if (start < 0 || end < start) throw new Error("known-differences markers not found");
  return text.slice(0, start) + table + text.slice(end + END_MARKER.length);
}

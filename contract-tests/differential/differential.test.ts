import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSandbox, type Sandbox } from "@sbx/core";
import { createSandboxProvider as createDockerProvider } from "@sbx/docker";
import { createSandboxProvider as createFakeProvider } from "@sbx/fake";
import { describe, expect, it } from "vitest";
import { CORPUS, type CorpusEntry } from "./corpus.js";
import { mapWithConcurrency, observe, OBSERVED_FIELDS, type BackendKind, type Observation, type ObservedField } from "./observe.js";
import { readKnownDifferences, renderTable, REPOSITORY_ROOT, TABLE_FILES, withTable } from "./render-known-differences.mjs";

/**
 * The differential suite: every corpus entry runs on the fake and on Docker with the same inputs; stdout, stderr,
 * exit code (or runCode's error) and truncation are compared after normalisation. A difference must be listed in
 * known-differences.json with its reason, and a listed difference must still occur, so the table stays true.
 */

interface KnownDifference {
  readonly id: string;
  readonly differsIn: readonly ObservedField[];
  readonly reason: string;
}

const image = process.env.SBX_DOCKER_IMAGE ?? "sbx-test/python:3.11";
const dockerProvider = createDockerProvider({ image });
const dockerRequired = (process.env.SBX_REQUIRE ?? "")
  .split(",")
  .map((name) => name.trim())
  .includes("docker");
const dockerStatus = await dockerProvider.detect();
if (!dockerStatus.usable) {
  const message = `Docker is not usable here: ${dockerStatus.reason} ${dockerStatus.remedy}`;
  if (dockerRequired) throw new Error(`SBX_REQUIRE names docker, but ${message}`);
  console.warn(`\n[sbx differential] SKIPPING the fake-vs-Docker comparison: ${message}. Set SBX_REQUIRE=docker to make this a failure.\n`);
}

const knownDifferences = readKnownDifferences() as KnownDifference[];
const scripts = Object.fromEntries(
  CORPUS.map((entry) => [entry.id, entry.kind === "shell" ? entry.script : entry.kind === "code" ? entry.code : entry.cells.join("\n# next cell\n")]),
);

/** Runs the whole corpus on one sandbox, each shell entry in its own fresh folder. */
async function runCorpus(sandbox: Sandbox, backend: BackendKind, concurrency: number): Promise<Map<string, Observation>> {
  const observations = await mapWithConcurrency(CORPUS, concurrency, async (entry: CorpusEntry, index) => {
    const cwd = `${sandbox.workspace}/case-${index}`;
    await sandbox.files.mkdir(cwd);
    try {
      return await observe(sandbox, backend, entry, cwd);
    } catch (error) {
      // An sbx error (timeout, ...) is an observation too: it is compared like output.
      const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      return { stdout: "", stderr: "", exitCode: null, error: `threw ${text}`, truncated: "n/a" } satisfies Observation;
    }
  });
  return new Map(CORPUS.map((entry, index) => [entry.id, observations[index]!]));
}

function differingFields(fake: Observation, docker: Observation): ObservedField[] {
  return OBSERVED_FIELDS.filter((field) => fake[field] !== docker[field]);
}

function excerpt(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

describe("differential: the fake against Docker", () => {
  it("the corpus has at least 150 entries with unique ids", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(150);
    expect(new Set(CORPUS.map((entry) => entry.id)).size).toBe(CORPUS.length);
  });

  it("every known difference names a corpus entry, the fields it differs in, and a reason", () => {
    const ids = new Set(CORPUS.map((entry) => entry.id));
    for (const difference of knownDifferences) {
      expect(ids.has(difference.id), `known difference ${difference.id} names no corpus entry`).toBe(true);
      expect(difference.differsIn.length).toBeGreaterThan(0);
      for (const field of difference.differsIn) expect(OBSERVED_FIELDS).toContain(field);
      expect(difference.reason.trim().length).toBeGreaterThan(20);
    }
    expect(new Set(knownDifferences.map((difference) => difference.id)).size).toBe(knownDifferences.length);
  });

  it("the fake's README and docs carry the current known-differences table", () => {
    const table = renderTable(knownDifferences, scripts);
    for (const file of TABLE_FILES) {
      const path = join(REPOSITORY_ROOT, file);
      const text = readFileSync(path, "utf8");
      const current = withTable(text, table);
      if (process.env.SBX_RENDER_DIFFERENCES === "1" && current !== text) writeFileSync(path, current);
      else expect(text, `${file} is out of date: run SBX_RENDER_DIFFERENCES=1 pnpm exec vitest run --project contract differential`).toBe(current);
    }
  });

  it.skipIf(!dockerStatus.usable)(
    `every difference between the fake and Docker (${image}) is listed, and every listed one still occurs`,
    async () => {
      await using fake = await createSandbox(createFakeProvider());
      await using docker = await createSandbox(dockerProvider, { metadata: { "sbx-test": "differential" } });
      const [onFake, onDocker] = await Promise.all([runCorpus(fake, "fake", 4), runCorpus(docker, "docker", 4)]);

      const listed = new Map(knownDifferences.map((difference) => [difference.id, difference]));
      const unexpected: string[] = [];
      const stale: string[] = [];
      let agreeing = 0;
      for (const entry of CORPUS) {
        const fakeObservation = onFake.get(entry.id)!;
        const dockerObservation = onDocker.get(entry.id)!;
        const fields = differingFields(fakeObservation, dockerObservation);
        const known = listed.get(entry.id);
        if (fields.length === 0) agreeing++;
        const expected = [...(known?.differsIn ?? [])].sort().join(",");
        if (fields.sort().join(",") === expected) continue;
        if (known) stale.push(`${entry.id}: listed as differing in [${expected}], now differs in [${fields.join(",")}]`);
        else {
          unexpected.push(
            [
              `${entry.id} (${JSON.stringify(scripts[entry.id])}) differs in [${fields.join(", ")}]:`,
              ...fields.map((field) => `  ${field}: fake ${excerpt(fakeObservation[field])} | docker ${excerpt(dockerObservation[field])}`),
            ].join("\n"),
          );
        }
      }
      const rate = (100 * agreeing) / CORPUS.length;
      console.log(
        `\n[sbx differential] ${agreeing}/${CORPUS.length} corpus entries agree between the fake and Docker (${rate.toFixed(1)}%); ${knownDifferences.length} known differences listed.\n`,
      );
      expect(
        [...unexpected, ...stale],
        "differences not in contract-tests/differential/known-differences.json (fix them or list them with a reason), and listed ones that no longer occur",
      ).toEqual([]);
    },
    600_000,
  );
});

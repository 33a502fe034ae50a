import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds the slowest test files (path from the repository root) took in a serial run (measured for ADR 0024; a
 * rough guide, not a limit). With several workers the run ends no sooner than its longest file, so these start
 * first and the many short files fill the gaps. A file not listed counts as short; keep the list to files over ~15 s.
 */
const SLOW_FILES: Readonly<Record<string, number>> = {
  "contract-tests/consumer-check.test.ts": 175,
  "packages/docker/test/file-channel-attacks.test.ts": 105,
  "bench/test/smoke.test.ts": 80,
  "packages/docker/test/ptrace-escape.test.ts": 170,
  "packages/docker/test/helper-output-limit.test.ts": 30,
  "packages/docker/test/many-processes.test.ts": 25,
  "packages/docker/test/egress-host-addresses.test.ts": 20,
  "packages/docker/test/sweep-volumes.test.ts": 20,
  "packages/docker/test/root-lifetime.test.ts": 19,
  "packages/docker/test/oom-attribution.test.ts": 16,
  "contract-tests/e2b.contract.test.ts": 280,
  "contract-tests/modal.contract.test.ts": 330,
  // Agent commands (ADR 0051, 0052): 201 s and 222 s measured on a shared machine (load 10 to 14).
  "contract-tests/kubernetes.contract.test.ts": 200,
  "contract-tests/apple-container.contract.test.ts": 220,
  "packages/docker/test/pause.test.ts": 110,
  "contract-tests/docker.contract.test.ts": 190,
  "contract-tests/docker-entrypoint.contract.test.ts": 260,
  "contract-tests/fake.contract.test.ts": 83,
  "contract-tests/full-driver-adapter.contract.test.ts": 51,
  "contract-tests/example-adapter.contract.test.ts": 49,
  "packages/mcp/test/mcp-tools.test.ts": 43,
  "tools/e2b-emulator/test/commands.test.ts": 31,
  "packages/modal/test/output-drain.emulator.test.ts": 30,
  "packages/docker/test/stalled-engine.test.ts": 31,
  "packages/docker/test/host-memory.test.ts": 29,
  "packages/fake/test/fidelity.test.ts": 28,
  "packages/docker/test/sandbox-agent.test.ts": 28,
  "contract-tests/differential/differential.test.ts": 27,
  "packages/core/test/python-one-shot.test.ts": 22,
  "packages/e2b/test/lost-sandbox.emulator.test.ts": 20,
};

/**
 * Vitest's own order (failed and slow files first when it has a cache, else larger files first), with the files
 * known to be slow moved to the front, longest first: on a clean clone (CI) there is no cache, and file size says
 * little about how long a file waits on containers.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const seconds = (file: TestSpecification) => SLOW_FILES[relative(this.ctx.config.root, file.moduleId)] ?? 0;
    return ordered
      .map((file, index) => ({ file, index }))
      .sort((a, b) => seconds(b.file) - seconds(a.file) || a.index - b.index)
      .map(({ file }) => file);
  }
}

import { createSandbox } from "@sbx/core";

/**
 * The README's Usage example, kept as code so it is type-checked and run by
 * contract-tests/readme-examples.test.ts, which also checks the README shows exactly the lines between the markers.
 */
export async function readmeUsage(): Promise<void> {
  // #region usage
  const image = process.env.SBX_DOCKER_IMAGE ?? "python:3.12-slim";
  await using sandbox = await createSandbox(`docker://${image}`, {
    network: { egress: "deny" }, // the default
    limits: { memoryMiB: 512, cpus: 1 },
    timeoutMs: 10 * 60_000, // the sandbox ends by itself after this
    secrets: { API_TOKEN: process.env.API_TOKEN ?? "example-token" }, // never in the audit record or error messages
  });

  const result = await sandbox.commands.run("python3 --version; echo $((6 * 7))", {
    timeoutMs: 60_000,
    onStdout: (text) => process.stdout.write(text),
  });
  console.log(result.exitCode, result.truncated); // 0 { stdout: false, stderr: false }

  const execution = await sandbox.runCode("import math\nprint(math.pi)");
  console.log(execution.stdout, execution.error, execution.results); // results: null on Docker (no rich-result channel)

  await sandbox.files.write("data/input.csv", "a,b\n1,2\n");
  console.log(JSON.stringify(sandbox.audit(), null, 2));
  // #endregion usage
}

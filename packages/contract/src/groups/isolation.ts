import { createSandbox, isSbxError } from "@sbx/core";
import { expect } from "vitest";
import {
  countingProvider,
  describeGroup,
  mergeCreateOptions,
  type ContractHarness,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/** Host sockets that would hand a sandbox the host (the container engine, containerd); none may be reachable. */
export const HOST_SOCKET_PATHS = ["/run/docker.sock", "/var/run/docker.sock", "/run/containerd/containerd.sock"] as const;

/** Image folders an isolating sandbox's default user must not write (the workspace and `/tmp` are the writable places). */
export const READ_ONLY_IMAGE_FOLDERS = ["/", "/etc", "/usr", "/var"] as const;

/** Prints the `CapEff` line of the shell's own `/proc/self/status` (hexadecimal effective capability set). */
const EFFECTIVE_CAPABILITIES_COMMAND = "grep '^CapEff:' /proc/self/status";

/**
 * Tries the attack of issue 18 (remount the root read-write, as a privileged sandbox could), then writes a file in
 * each image folder; prints each folder where the write succeeded. Removes what it wrote.
 */
const ROOT_FILESYSTEM_WRITE_COMMAND = [
  "mount -o remount,rw / >/dev/null 2>&1",
  `for folder in ${READ_ONLY_IMAGE_FOLDERS.join(" ")}; do`,
  '  probe="${folder%/}/sbx-isolation-probe-$$"',
  '  if (: > "$probe") 2>/dev/null; then echo "$folder"; rm -f "$probe"; fi',
  "done",
  "exit 0",
].join("\n");

/** Prints each host socket path that exists in the sandbox. */
const HOST_SOCKETS_COMMAND = `for path in ${HOST_SOCKET_PATHS.join(" ")}; do if [ -e "$path" ]; then echo "$path"; fi; done; exit 0`;

/** Lists the descriptors the command's own shell holds. `ls` is a child (the `echo` after it keeps shells from exec-ing it in place of themselves), so it lists the shell's descriptors, not its own. */
const OPEN_DESCRIPTORS_COMMAND = "ls -l /proc/$$/fd; echo listed";

/** Parses `ls -l /proc/N/fd` lines (`lrwx------ … 3 -> socket:[123]`) into `{ fd: target }`. */
export function parseDescriptorListing(listing: string): Record<string, string> {
  const descriptors: Record<string, string> = {};
  for (const line of listing.split("\n")) {
    const match = /\s(\d+) -> (.*)$/.exec(line);
    if (match) descriptors[match[1]!] = match[2]!;
  }
  return descriptors;
}

/**
 * Registers the isolation tests (ADR 0029), measured from inside the sandbox. For every backend whose provider says it
 * isolates (`isolating: true`): the default sandbox user has no effective capabilities, cannot write the image outside
 * the workspace and `/tmp` (even after trying to remount it read-write), and sees no host socket under egress deny.
 * For every backend: a command inherits no descriptor of the host process beyond stdin, stdout and stderr.
 */
export function registerIsolationTests(harness: ContractHarness): void {
  const { contractTest, provider } = harness;

  if (provider.isolating) {
    contractTest(
      "isolation.no-capabilities",
      "the default sandbox user has no effective capabilities (CapEff in /proc/self/status is 0)",
      async () => {
        await using sandbox = await harness.createSandbox();
        const result = await sandbox.commands.run(EFFECTIVE_CAPABILITIES_COMMAND);
        expect(result.exitCode, `\`${EFFECTIVE_CAPABILITIES_COMMAND}\` failed: ${result.stderr}`).toBe(0);
        const effective = result.stdout.replace(/^CapEff:\s*/, "").trim();
        expect(BigInt(`0x${effective}`), `the sandbox user's effective capability set is ${effective}, wanted none`).toBe(0n);
      },
    );

    contractTest(
      "isolation.read-only-root",
      `the default sandbox user cannot write the image outside the workspace and /tmp (${READ_ONLY_IMAGE_FOLDERS.join(", ")}), even after \`mount -o remount,rw /\``,
      async () => {
        await using sandbox = await harness.createSandbox();
        const result = await sandbox.commands.run(ROOT_FILESYSTEM_WRITE_COMMAND);
        expect(result.exitCode, `the probe failed: ${result.stderr}`).toBe(0);
        const writable = result.stdout.split("\n").filter(Boolean);
        expect(writable, "image folders the sandbox could write").toEqual([]);
        const workspace = await sandbox.commands.run(": > isolation-workspace-probe && echo written");
        expect(workspace.stdout, `the workspace itself must stay writable (stderr: ${workspace.stderr})`).toBe("written\n");
      },
    );

    contractTest("isolation.no-host-sockets", `no host socket is reachable under egress deny (${HOST_SOCKET_PATHS.join(", ")})`, async () => {
      await using sandbox = await harness.createSandbox({ network: { egress: "deny" } });
      const result = await sandbox.commands.run(HOST_SOCKETS_COMMAND);
      expect(result.exitCode, `the probe failed: ${result.stderr}`).toBe(0);
      expect(result.stdout.split("\n").filter(Boolean), "host sockets present in the sandbox").toEqual([]);
    });
  }

  contractTest(
    "isolation.no-inherited-descriptors",
    "a command holds only stdin, stdout and stderr: no descriptor of the host process is inherited",
    async () => {
      await using sandbox = await harness.createSandbox();
      const result = await sandbox.commands.run(OPEN_DESCRIPTORS_COMMAND);
      expect(result.exitCode, `\`${OPEN_DESCRIPTORS_COMMAND}\` failed: ${result.stderr}`).toBe(0);
      const descriptors = parseDescriptorListing(result.stdout);
      expect(Object.keys(descriptors), `no descriptors parsed from: ${result.stdout}`).toContain("1");
      const extra = Object.fromEntries(Object.entries(descriptors).filter(([fd]) => !["0", "1", "2"].includes(fd)));
      expect(extra, "descriptors beyond 0, 1 and 2 the command's shell holds (fd → target)").toEqual({});
    },
  );
}

/**
 * Registers the `user: "root"` test. There is no manifest flag for it: a backend either runs commands as uid 0, or
 * refuses the option with a typed error (`CapabilityNotSupportedError` or `PolicyNotEnforcedError`) before anything is
 * left behind. Never a sandbox that records "root" and runs as someone else.
 */
export function registerUserTests(harness: ContractHarness): void {
  const { contractTest, options } = harness;

  contractTest(
    "user.root",
    'user: "root" runs commands as uid 0 (id -u), recorded in the audit; or is refused with a typed error and nothing left',
    async () => {
      const counting = countingProvider(harness.provider);
      let sandbox;
      try {
        sandbox = await createSandbox(counting.provider, mergeCreateOptions(options.createOptions, { user: "root" }));
      } catch (error) {
        const refusedWithType = isSbxError(error, "SBX_CAPABILITY_NOT_SUPPORTED") || isSbxError(error, "SBX_POLICY_NOT_ENFORCED");
        expect(
          refusedWithType,
          `user: "root" was refused with ${isSbxError(error) ? error.code : String(error)}, wanted SBX_CAPABILITY_NOT_SUPPORTED or SBX_POLICY_NOT_ENFORCED`,
        ).toBe(true);
        const sandboxExists = options.sandboxExists;
        for (const id of counting.createdIds()) {
          const exists = sandboxExists ? await sandboxExists(id) : "unknown (no sandboxExists option)";
          expect(exists, `sandbox ${id} created by the refused user: "root" call still exists`).toBe(false);
        }
        return;
      }
      await using created = sandbox;
      expect(created.audit().policies.user.requested, "audit policies.user.requested").toBe("root");
      const result = await created.commands.run("id -u");
      expect({ exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr }, '`id -u` in a user: "root" sandbox').toEqual({
        exitCode: 0,
        stdout: "0\n",
        stderr: "",
      });
    },
  );
}

/** The isolation group on its own. */
export function describeIsolationContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("isolation", name, factory, options, registerIsolationTests);
}

/** The `user: "root"` group on its own. */
export function describeUserContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("user", name, factory, options, registerUserTests);
}

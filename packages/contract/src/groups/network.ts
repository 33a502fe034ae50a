import { createSandbox, type Sandbox } from "@sbx/core";
import { expect, type TestContext } from "vitest";
import {
  countingProvider,
  describeGroup,
  expectCapabilityRefused,
  mergeCreateOptions,
  type ContractHarness,
  type NetworkFixture,
  type SandboxContractOptions,
  type SandboxProviderFactoryForContract,
} from "../harness.js";

/**
 * The default probe: prints the HTTP status of GET `url` with curl, or with python3's urllib where curl is
 * missing; exits non-zero when the connection fails.
 */
export function defaultProbeCommand(url: string): string {
  const quoted = `'${url.replace(/'/g, `'\\''`)}'`;
  return (
    `if command -v curl >/dev/null 2>&1; then curl -s -o /dev/null -w '%{http_code}' --max-time 5 ${quoted}; ` +
    `else python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).status)' ${quoted}; fi`
  );
}

async function probe(sandbox: Sandbox, fixture: NetworkFixture, url: string): Promise<boolean> {
  const result = await sandbox.commands.run((fixture.probeCommand ?? defaultProbeCommand)(url), { timeoutMs: 30_000 });
  return result.exitCode === 0 && result.stdout.trim() === "200";
}

function networkPolicyOf(sandbox: Sandbox): { requested: { egress?: string }; applied: { egress?: string } } {
  const record = sandbox.audit().policies.network;
  return { requested: record.requested as { egress?: string }, applied: record.applied as { egress?: string } };
}

/** Registers the egress tests. Tests needing a server skip (with a reason) when `options.network` is absent. */
export function registerNetworkTests(harness: ContractHarness): void {
  const { contractTest, capabilities, options } = harness;
  const fixture = options.network;

  function requireFixture(context: TestContext): NetworkFixture {
    if (!fixture) context.skip("no network fixture: pass options.network to describeSandboxContract to run the egress tests");
    return fixture!;
  }

  const allowedOptions = (extra: Parameters<ContractHarness["createSandbox"]>[0]) => mergeCreateOptions(fixture?.createOptions, extra);

  contractTest("network.deny-blocks", "by default (deny), a server the test started is unreachable", async (context) => {
    const network = requireFixture(context);
    const started = await network.startServers(1);
    try {
      await using sandbox = await harness.createSandbox();
      expect(await probe(sandbox, network, started.servers[0]!.url), `GET ${started.servers[0]!.url} answered 200 under egress deny`).toBe(false);
      expect(networkPolicyOf(sandbox).applied.egress).toBe("deny");
    } finally {
      await started.close();
    }
  });

  contractTest("network.allow-reaches", 'with { egress: "allow" }, the server is reachable', async (context) => {
    const network = requireFixture(context);
    const started = await network.startServers(1);
    try {
      await using sandbox = await harness.createSandbox(allowedOptions({ network: { egress: "allow" } }));
      expect(await probe(sandbox, network, started.servers[0]!.url), `GET ${started.servers[0]!.url} answered 200 under egress allow`).toBe(true);
      expect(networkPolicyOf(sandbox).applied.egress).toBe("allow");
    } finally {
      await started.close();
    }
  });

  if (capabilities.EGRESS_ALLOWLIST) {
    contractTest("network.allowlist", "an allowlist naming server 0 reaches server 0 and not server 1", async (context) => {
      const network = requireFixture(context);
      const started = await network.startServers(2);
      try {
        const [allowed, other] = started.servers;
        await using sandbox = await harness.createSandbox(allowedOptions({ network: { egress: "deny", allow: [allowed!.host] } }));
        expect(await probe(sandbox, network, allowed!.url), `GET ${allowed!.url} (on the allowlist) answered 200`).toBe(true);
        expect(await probe(sandbox, network, other!.url), `GET ${other!.url} (not on the allowlist) answered 200`).toBe(false);
        expect(networkPolicyOf(sandbox).applied.egress).toBe("deny");
      } finally {
        await started.close();
      }
    });

    contractTest(
      "network.allowlist-proxy-variables-unset",
      "with every proxy variable unset, the server off the list stays unreachable (enforcement does not depend on the sandbox's cooperation)",
      async (context) => {
        const network = requireFixture(context);
        const started = await network.startServers(2);
        try {
          const [allowed, other] = started.servers;
          await using sandbox = await harness.createSandbox(allowedOptions({ network: { egress: "deny", allow: [allowed!.host] } }));
          const bypass = (url: string) =>
            `unset HTTP_PROXY HTTPS_PROXY http_proxy https_proxy ALL_PROXY all_proxy NO_PROXY no_proxy; ${(network.probeCommand ?? defaultProbeCommand)(url)}`;
          const result = await sandbox.commands.run(bypass(other!.url), { timeoutMs: 30_000 });
          expect(
            result.exitCode === 0 && result.stdout.trim() === "200",
            `the bypass attempt reached ${other!.url} (exit ${result.exitCode}, stdout ${JSON.stringify(result.stdout.slice(0, 200))})`,
          ).toBe(false);
        } finally {
          await started.close();
        }
      },
    );

    contractTest("network.allowlist-per-sandbox", "two sandboxes with different allowlists each reach only their own server", async (context) => {
      const network = requireFixture(context);
      const started = await network.startServers(2);
      try {
        const [first, second] = started.servers;
        await using firstSandbox = await harness.createSandbox(allowedOptions({ network: { egress: "deny", allow: [first!.host] } }));
        await using secondSandbox = await harness.createSandbox(allowedOptions({ network: { egress: "deny", allow: [second!.host] } }));
        expect(await probe(firstSandbox, network, first!.url), `the first sandbox reached ${first!.url}, on its own allowlist`).toBe(true);
        expect(await probe(secondSandbox, network, second!.url), `the second sandbox reached ${second!.url}, on its own allowlist`).toBe(true);
        expect(
          await probe(firstSandbox, network, second!.url),
          `the first sandbox reached ${second!.url}, on the other sandbox's allowlist only`,
        ).toBe(false);
        expect(
          await probe(secondSandbox, network, first!.url),
          `the second sandbox reached ${first!.url}, on the other sandbox's allowlist only`,
        ).toBe(false);
      } finally {
        await started.close();
      }
    });

    contractTest(
      "network.allowlist-audit",
      "the audit record names the requested allowlist entry and says egress is denied otherwise",
      async (context) => {
        const network = requireFixture(context);
        const started = await network.startServers(1);
        try {
          const entry = started.servers[0]!.host;
          await using sandbox = await harness.createSandbox(allowedOptions({ network: { egress: "deny", allow: [entry] } }));
          const record = sandbox.audit().policies.network;
          expect(JSON.stringify(record.requested)).toContain(JSON.stringify(entry));
          expect(networkPolicyOf(sandbox).applied.egress).toBe("deny");
          expect(record.enforcement.length).toBeGreaterThan(0);
        } finally {
          await started.close();
        }
      },
    );
  } else {
    contractTest("network.allowlist-refused", "an allowlist raises SBX_CAPABILITY_NOT_SUPPORTED before anything is created", async () => {
      const counting = countingProvider(harness.provider);
      await expectCapabilityRefused(
        harness,
        () => createSandbox(counting.provider, mergeCreateOptions(options.createOptions, { network: { egress: "deny", allow: ["127.0.0.1"] } })),
        "EGRESS_ALLOWLIST",
      );
      expect(counting.creates()).toBe(0);
    });
  }

  contractTest(
    "network.audit-policy",
    "the audit record's network policy says deny by default and allow when asked, requested and applied alike",
    async () => {
      {
        await using denied = await harness.createSandbox();
        const policy = networkPolicyOf(denied);
        expect(policy.requested.egress).toBe("deny");
        expect(policy.applied.egress).toBe("deny");
        expect(denied.audit().policies.network.enforcement.length).toBeGreaterThan(0);
      }
      {
        await using allowed = await harness.createSandbox(allowedOptions({ network: { egress: "allow" } }));
        const policy = networkPolicyOf(allowed);
        expect(policy.requested.egress).toBe("allow");
        expect(policy.applied.egress).toBe("allow");
      }
    },
  );
}

/** The network group on its own. */
export function describeNetworkContract(name: string, factory: SandboxProviderFactoryForContract, options?: SandboxContractOptions): void {
  describeGroup("network", name, factory, options, registerNetworkTests);
}

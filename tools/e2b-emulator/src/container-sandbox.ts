/**
 * One emulated sandbox: a Docker container plus the envd-like state the
 * emulator keeps for it (running commands, code contexts, firewall rules,
 * lifetime timer).
 */
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import type Docker from "dockerode";
import { runExec } from "./docker-exec.js";
import { ProcessRegistry } from "./envd-process.js";
import { CodeContextRegistry, codeInterpreterDriverPath, codeInterpreterDriverSource } from "./code-interpreter.js";
import { FilesystemHelperRegistry } from "./filesystem-helper.js";
import {
  describeFirewallRule,
  installFirewallRules,
  removeFirewallRules,
  type FirewallRule,
  type NetworkPolicyPlan,
  type RequestedNetwork,
} from "./network-policy.js";

/** Label put on every container the emulator creates. */
export const EMULATOR_LABEL = "sbx.e2b-emulator";
/** Label holding the id of the emulator instance that owns the container. */
export const EMULATOR_INSTANCE_LABEL = "sbx.e2b-emulator.instance";
/** Label holding the emulated sandbox id. */
export const SANDBOX_ID_LABEL = "sbx.e2b-emulator.sandbox";

/** envd version reported to the SDK; gates features in the SDK (see the wire-protocol notes). */
export const EMULATED_ENVD_VERSION = "0.6.13";

/** File inside the container holding the lifetime deadline (Unix seconds) that PID 1's loop obeys. */
const DEADLINE_FILE = "/run/e2b-emulator-deadline";

/** Default unprivileged user, as in E2B templates. */
export const DEFAULT_USER = "user";

/** Home directory of a sandbox user. */
export function homeDirectoryOf(user: string): string {
  return user === "root" ? "/root" : `/home/${user}`;
}

/** Random lowercase alphanumeric id, E2B style. */
export function randomIdentifier(length: number): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = randomBytes(length);
  let result = "";
  for (let index = 0; index < length; index++) result += alphabet[bytes[index]! % alphabet.length];
  return result;
}

/** Everything needed to start a sandbox container. */
export interface ContainerSandboxOptions {
  docker: Docker;
  image: string;
  instanceId: string;
  networkName: string;
  templateId: string;
  timeoutSeconds: number;
  maxTimeoutSeconds: number;
  metadata: Record<string, string>;
  environment: Record<string, string>;
  plan: NetworkPolicyPlan;
  allowInternetAccess: boolean | undefined;
  requestedNetwork: RequestedNetwork | undefined;
  /** Called once the sandbox is gone (killed or timed out). */
  onGone: (sandbox: ContainerSandbox) => void;
}

/** What `GET /_emulator/sandboxes/{id}` reports. */
export interface SandboxEnforcementReport {
  sandboxId: string;
  containerId: string;
  containerAddress: string | null;
  networkMode: "none" | string;
  networkPlan: NetworkPolicyPlan;
  firewallRules: string[];
  startedAt: string;
  endAt: string;
}

/** An emulated sandbox backed by a running container. */
export class ContainerSandbox {
  readonly id = randomIdentifier(20);
  readonly accessToken = randomBytes(24).toString("hex");
  readonly clientId = randomIdentifier(8);
  readonly startedAt = new Date();
  readonly processes: ProcessRegistry;
  readonly codeContexts: CodeContextRegistry;
  /** Persistent per-user processes answering the envd filesystem RPCs. */
  readonly filesystemHelpers: FilesystemHelperRegistry;
  endAt: Date;
  container!: Docker.Container;
  containerId = "";
  containerAddress: string | null = null;
  firewallRules: FirewallRule[] = [];
  private lifetimeTimer: NodeJS.Timeout | undefined;
  private killing: Promise<void> | undefined;
  private ended = false;
  /** Data-plane responses (envd, code interpreter) still being answered; dropped when the sandbox ends. */
  private readonly inFlight = new Set<ServerResponse>();

  private constructor(readonly options: ContainerSandboxOptions) {
    this.endAt = this.computeEndAt(options.timeoutSeconds);
    this.processes = new ProcessRegistry(this);
    this.codeContexts = new CodeContextRegistry(this);
    this.filesystemHelpers = new FilesystemHelperRegistry(this);
  }

  /** Creates, starts and prepares the container (user account, driver script, firewall). */
  static async start(options: ContainerSandboxOptions): Promise<ContainerSandbox> {
    const sandbox = new ContainerSandbox(options);
    try {
      await sandbox.createContainer();
    } catch (error) {
      await sandbox.kill();
      throw error;
    }
    sandbox.armTimer();
    return sandbox;
  }

  /** True once kill started. */
  get gone(): boolean {
    return this.ended;
  }

  /**
   * Registers a data-plane response being answered for this sandbox. When the sandbox ends (killed, or its
   * lifetime over) every such connection is dropped mid-answer, as when E2B's microVM goes away: the SDK sees
   * the connection terminated, probes `/health` (502 from then on) and raises its "sandbox was killed" error.
   */
  track(response: ServerResponse): void {
    if (this.ended) {
      response.destroy();
      return;
    }
    this.inFlight.add(response);
    response.once("close", () => this.inFlight.delete(response));
  }

  /** Environment every process of the sandbox gets (create-time envVars). */
  get environment(): Record<string, string> {
    return this.options.environment;
  }

  get templateId(): string {
    return this.options.templateId;
  }

  get metadata(): Record<string, string> {
    return this.options.metadata;
  }

  private computeEndAt(requestedSeconds: number): Date {
    const appliedSeconds = Math.max(0, Math.min(requestedSeconds, this.options.maxTimeoutSeconds));
    const lifetimeCap = this.startedAt.getTime() + this.options.maxTimeoutSeconds * 1000;
    return new Date(Math.min(Date.now() + appliedSeconds * 1000, lifetimeCap));
  }

  private async createContainer(): Promise<void> {
    const { docker, plan } = this.options;
    const deadline = Math.ceil(this.endAt.getTime() / 1000);
    // PID 1 (under docker-init) sleeps until the deadline in DEADLINE_FILE, so the container
    // ends on time even if the emulator process dies; setTimeout rewrites the file.
    const lifetimeScript =
      `echo "$1" > ${DEADLINE_FILE}; ` + `while [ "$(date +%s)" -lt "$(cat ${DEADLINE_FILE} 2>/dev/null || echo 0)" ]; do sleep 1; done`;
    this.container = await docker.createContainer({
      Image: this.options.image,
      name: `e2b-emulator-${this.id}`,
      Cmd: ["/bin/sh", "-c", lifetimeScript, "e2b-emulator-lifetime", String(deadline)],
      Env: Object.entries(this.options.environment).map(([key, value]) => `${key}=${value}`),
      WorkingDir: "/",
      Labels: {
        [EMULATOR_LABEL]: "1",
        [EMULATOR_INSTANCE_LABEL]: this.options.instanceId,
        [SANDBOX_ID_LABEL]: this.id,
      },
      HostConfig: {
        AutoRemove: true,
        Init: true,
        NetworkMode: plan.mode === "none" ? "none" : this.options.networkName,
      },
    });
    this.containerId = this.container.id;
    await this.container.start();
    const setupScript = [
      `id -u ${DEFAULT_USER} >/dev/null 2>&1 || useradd -m -u 1000 -s /bin/bash ${DEFAULT_USER} 2>/dev/null || {`,
      `  echo '${DEFAULT_USER}:x:1000:1000::/home/${DEFAULT_USER}:/bin/bash' >> /etc/passwd;`,
      `  echo '${DEFAULT_USER}:x:1000:' >> /etc/group; }`,
      `mkdir -p /home/${DEFAULT_USER} && chown ${DEFAULT_USER}: /home/${DEFAULT_USER}`,
      `mkdir -p "$(dirname ${codeInterpreterDriverPath})"`,
      `cat > ${codeInterpreterDriverPath}`,
    ].join("\n");
    const setup = await runExec(this.container, {
      command: ["/bin/sh", "-c", setupScript],
      user: "root",
      stdinData: Buffer.from(codeInterpreterDriverSource, "utf8"),
    });
    if (setup.exitCode !== 0) {
      throw new Error(`sandbox setup failed (exit ${setup.exitCode}): ${setup.stderr.toString("utf8")}`);
    }
    if (plan.mode === "network") {
      const information = await this.container.inspect();
      this.containerAddress = information.NetworkSettings.Networks[this.options.networkName]?.IPAddress || null;
      if (plan.needsFirewall) {
        if (!this.containerAddress) throw new Error("container has no IP address to firewall");
        this.firewallRules = await installFirewallRules(this.containerAddress, plan, `sbx-e2b-emulator:${this.id}`);
      }
    }
  }

  private armTimer(): void {
    if (this.lifetimeTimer) clearTimeout(this.lifetimeTimer);
    const remaining = Math.max(0, this.endAt.getTime() - Date.now());
    this.lifetimeTimer = setTimeout(() => void this.kill(), remaining);
    this.lifetimeTimer.unref();
  }

  /** Sets a new timeout from now (cut to the tier cap) and moves the container's own deadline. */
  async setTimeout(requestedSeconds: number): Promise<void> {
    this.endAt = this.computeEndAt(requestedSeconds);
    this.armTimer();
    const deadline = Math.ceil(this.endAt.getTime() / 1000);
    await runExec(this.container, {
      command: ["/bin/sh", "-c", `echo ${deadline} > ${DEADLINE_FILE}`],
      user: "root",
    }).catch(() => undefined);
  }

  /** Describes what was enforced, for `GET /_emulator/sandboxes/{id}`. */
  enforcementReport(): SandboxEnforcementReport {
    return {
      sandboxId: this.id,
      containerId: this.containerId,
      containerAddress: this.containerAddress,
      networkMode: this.options.plan.mode === "none" ? "none" : this.options.networkName,
      networkPlan: this.options.plan,
      firewallRules: this.firewallRules.map(describeFirewallRule),
      startedAt: this.startedAt.toISOString(),
      endAt: this.endAt.toISOString(),
    };
  }

  /** The `network` object getInfo returns, echoing the request. */
  get requestedNetwork(): RequestedNetwork | undefined {
    return this.options.requestedNetwork;
  }

  get allowInternetAccess(): boolean | undefined {
    return this.options.allowInternetAccess;
  }

  /** Removes the container and firewall rules and ends all streams. Idempotent. */
  kill(): Promise<void> {
    if (!this.killing) {
      this.ended = true;
      // The connections go first and abruptly (no end frame, no exit event): nothing in a killed VM answers.
      for (const response of this.inFlight) response.destroy();
      this.inFlight.clear();
      this.killing = (async () => {
        if (this.lifetimeTimer) clearTimeout(this.lifetimeTimer);
        this.options.onGone(this);
        if (this.container) await this.container.remove({ force: true }).catch(() => undefined);
        await removeFirewallRules(this.firewallRules);
        this.processes.closeAll();
        this.codeContexts.closeAll();
        this.filesystemHelpers.closeAll();
      })();
    }
    return this.killing;
  }
}

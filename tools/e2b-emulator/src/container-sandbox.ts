/**
 * One emulated sandbox: a Docker container plus the envd-like state the
 * emulator keeps for it (running commands, code contexts, firewall rules,
 * lifetime timer).
 */
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import type Docker from "dockerode";
import type { WarmContainerPool } from "@sbx/emulator-kit";
import { ProcessRegistry } from "./envd-process.js";
import { CodeContextRegistry } from "./code-interpreter.js";
import { FilesystemHelperRegistry } from "./filesystem-helper.js";
import { prepareContainer, shapeKey, writeDeadline, type ContainerShape, type PreparedContainer } from "./sandbox-container.js";
import {
  describeFirewallRule,
  installFirewallRules,
  removeFirewallRules,
  type FirewallRule,
  type NetworkPolicyPlan,
  type RequestedNetwork,
} from "./network-policy.js";

export { DEFAULT_USER, EMULATOR_INSTANCE_LABEL, EMULATOR_LABEL, SANDBOX_ID_LABEL } from "./sandbox-container.js";

/** envd version reported to the SDK; gates features in the SDK (see the wire-protocol notes). */
export const EMULATED_ENVD_VERSION = "0.6.13";

/**
 * Longest a container waits in the warm pool before it is discarded instead of used, in milliseconds; its own
 * backstop deadline (PID 1's) is this plus `WARM_DEADLINE_SLACK_SECONDS`, so it is rewritten long before it passes.
 */
export const WARM_CONTAINER_MAX_AGE_MS = 120_000;
const WARM_DEADLINE_SLACK_SECONDS = 60;

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
  /** Containers prepared ahead of demand (ADR 0041); without it every create starts its own. */
  warmContainers?: WarmContainerPool<PreparedContainer>;
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
  readonly id: string;
  readonly accessToken = randomBytes(24).toString("hex");
  readonly clientId = randomIdentifier(8);
  readonly startedAt: Date;
  readonly processes: ProcessRegistry;
  readonly codeContexts: CodeContextRegistry;
  /** Persistent per-user processes answering the envd filesystem RPCs. */
  readonly filesystemHelpers: FilesystemHelperRegistry;
  endAt: Date;
  readonly container: Docker.Container;
  readonly containerId: string;
  readonly containerAddress: string | null;
  firewallRules: FirewallRule[] = [];
  private lifetimeTimer: NodeJS.Timeout | undefined;
  private killing: Promise<void> | undefined;
  private ended = false;
  /** Data-plane responses (envd, code interpreter) still being answered; dropped when the sandbox ends. */
  private readonly inFlight = new Set<ServerResponse>();

  private constructor(
    readonly options: ContainerSandboxOptions,
    prepared: PreparedContainer,
    startedAt: Date,
  ) {
    this.startedAt = startedAt;
    this.id = prepared.sandboxId;
    this.container = prepared.container;
    this.containerId = prepared.containerId;
    this.containerAddress = prepared.containerAddress;
    // Counted from the create request, like before a container was taken or prepared.
    this.endAt = new Date(startedAt.getTime() + Math.max(0, Math.min(options.timeoutSeconds, options.maxTimeoutSeconds)) * 1000);
    this.processes = new ProcessRegistry(this);
    this.codeContexts = new CodeContextRegistry(this);
    this.filesystemHelpers = new FilesystemHelperRegistry(this);
  }

  /**
   * Takes a container prepared ahead of demand (ADR 0041) or prepares one now (user account, driver script), then
   * applies what belongs to this sandbox: the deadline PID 1 obeys and the firewall rules of its network policy.
   */
  static async start(options: ContainerSandboxOptions): Promise<ContainerSandbox> {
    const startedAt = new Date();
    const shape: ContainerShape = {
      docker: options.docker,
      image: options.image,
      instanceId: options.instanceId,
      networkMode: options.plan.mode === "none" ? "none" : options.networkName,
    };
    const warmDeadline = () => Math.ceil((Date.now() + WARM_CONTAINER_MAX_AGE_MS) / 1000) + WARM_DEADLINE_SLACK_SECONDS;
    const warm = await options.warmContainers?.take(shapeKey(shape), () => prepareContainer(shape, randomIdentifier(20), warmDeadline()));
    const appliedSeconds = Math.max(0, Math.min(options.timeoutSeconds, options.maxTimeoutSeconds));
    const prepared = warm ?? (await prepareContainer(shape, randomIdentifier(20), Math.ceil(startedAt.getTime() / 1000 + appliedSeconds)));
    const sandbox = new ContainerSandbox(options, prepared, startedAt);
    try {
      if (warm) await writeDeadline(sandbox.container, Math.ceil(sandbox.endAt.getTime() / 1000));
      await sandbox.installFirewall();
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

  private async installFirewall(): Promise<void> {
    const { plan } = this.options;
    if (plan.mode !== "network" || !plan.needsFirewall) return;
    if (!this.containerAddress) throw new Error("container has no IP address to firewall");
    this.firewallRules = await installFirewallRules(this.containerAddress, plan, `sbx-e2b-emulator:${this.id}`);
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
    // Not swallowed: a deadline PID 1 was not told about would end the sandbox at its old end, against the answer given.
    await writeDeadline(this.container, Math.ceil(this.endAt.getTime() / 1000));
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
        await this.container.remove({ force: true }).catch(() => undefined);
        await removeFirewallRules(this.firewallRules);
        this.processes.closeAll();
        this.codeContexts.closeAll();
        this.filesystemHelpers.closeAll();
      })();
    }
    return this.killing;
  }
}

import { validate } from "@sbx/core/adapter";
import { z } from "zod";

/** Image used when neither the target nor the settings name one. */
export const DEFAULT_APPLE_CONTAINER_IMAGE = "docker.io/library/python:3.12-slim";

/**
 * Settings of the Apple `container` provider. Every field is optional; unknown fields are refused (a typo would
 * otherwise fall back to a default silently).
 */
export const appleContainerSettingsSchema = z
  .object({
    /** Image for a sandbox whose target names none (a provider object, or `apple-container://`). Default `docker.io/library/python:3.12-slim`. */
    image: z.string().min(1).optional(),
    /** Path of the `container` executable. Default: `container` on `PATH`, else `/usr/local/bin/container` (where Apple's installer puts it). */
    binary: z.string().min(1).optional(),
    /** Variables added to the CLI's own environment (not the sandbox's), for example a stand-in's switches. Default none. */
    environment: z.record(z.string(), z.string()).optional(),
    /**
     * Whether `detect()` and `create()` require macOS 26 or later on Apple silicon. Default true. Set false only for a
     * stand-in `container` on another system (the contract suite's Docker-backed stand-in): the real CLI needs a Mac.
     */
    checkPlatform: z.boolean().optional(),
    /** The `uid:gid` commands run as when the sandbox user is `"default"`. Default `10001:10001` (as Docker's adapter). */
    user: z
      .string()
      .regex(/^[1-9][0-9]*:[0-9]+$/, "must be a non-root numeric uid:gid such as 10001:10001")
      .optional(),
    /** How long one CLI control call (inspect, stop, delete, status) may take, in milliseconds. Default 60000. */
    requestTimeoutMs: z.number().int().positive().max(3_600_000).optional(),
    /** How long `container run` may take (it pulls a missing image), in milliseconds. Default 600000. */
    createTimeoutMs: z.number().int().positive().max(3_600_000).optional(),
    /**
     * When commands (and core's file operations, which are commands) go through the sbx sandbox agent, one long-lived
     * `container exec` (adr/0052): `"start"` (default) the first command starts the agent and later ones use it;
     * `"warm"` only once a code call started it; `"off"` never (one `container exec` per command). Both paths tag each
     * command and kill it verified. `"start"` is the default because every `container exec` starts a CLI process (and
     * a VM-side process start) that the agent spares; an image without python3 keeps every command on `container exec`.
     */
    agentCommands: z.enum(["start", "warm", "off"]).optional(),
  })
  .strict();

/** When commands go through the sbx sandbox agent (`settings.agentCommands`). */
export type AgentCommandsMode = "start" | "warm" | "off";

/** Settings before validation. */
export type AppleContainerSettings = z.input<typeof appleContainerSettingsSchema>;

/** Settings after validation, defaults applied. */
export interface ResolvedAppleContainerSettings {
  readonly image: string;
  readonly binary: string | undefined;
  readonly environment: Readonly<Record<string, string>>;
  readonly checkPlatform: boolean;
  readonly user: string;
  readonly requestTimeoutMs: number;
  readonly createTimeoutMs: number;
  readonly agentCommands: AgentCommandsMode;
}

/** Validates provider settings; throws `InvalidArgumentError` naming the offending field (`settings.user`). */
export function parseAppleContainerSettings(settings: unknown): ResolvedAppleContainerSettings {
  const data = validate(appleContainerSettingsSchema, settings ?? {}, "settings");
  return {
    image: data.image ?? DEFAULT_APPLE_CONTAINER_IMAGE,
    binary: data.binary,
    environment: { ...data.environment },
    checkPlatform: data.checkPlatform ?? true,
    user: data.user ?? "10001:10001",
    requestTimeoutMs: data.requestTimeoutMs ?? 60_000,
    createTimeoutMs: data.createTimeoutMs ?? 600_000,
    agentCommands: data.agentCommands ?? "start",
  };
}

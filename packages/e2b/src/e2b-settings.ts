import { validate } from "@sbx/core/adapter";
import { z } from "zod";

/**
 * Settings of the E2B provider, as the `e2b` SDK takes them. Every field is optional; unknown fields are refused
 * (a typo such as `apikey` would otherwise fall back to the environment silently).
 */
export const e2bSettingsSchema = z
  .object({
    /** E2B API key. Default: the `E2B_API_KEY` environment variable. */
    apiKey: z.string().min(1).optional(),
    /** E2B domain. Default: `E2B_DOMAIN` or `e2b.app` (the SDK's default). */
    domain: z.string().min(1).optional(),
    /** Control-plane base URL. Default: `E2B_API_URL` or `https://api.<domain>`. Set it to point at a self-hosted E2B or the emulator. */
    apiUrl: z.string().url().optional(),
    /** One base URL for every sandbox (envd and the code interpreter). Default: `E2B_SANDBOX_URL` or derived from the domain. */
    sandboxUrl: z.string().url().optional(),
    /** Timeout of each control-plane and envd request, in milliseconds. Default: the SDK's 60000. */
    requestTimeoutMs: z.number().int().positive().max(3_600_000).optional(),
  })
  .strict();

/** Settings of the E2B provider before validation. */
export type E2BSettings = z.input<typeof e2bSettingsSchema>;

/** Settings after validation, with the API key resolved from the environment when not given. */
export interface ResolvedE2BSettings {
  readonly apiKey: string | undefined;
  readonly domain: string | undefined;
  readonly apiUrl: string | undefined;
  readonly sandboxUrl: string | undefined;
  readonly requestTimeoutMs: number | undefined;
}

/**
 * Validates provider settings. Throws `InvalidArgumentError` naming the offending field (`settings.apiUrl`).
 * The key falls back to `E2B_API_KEY`; a missing key is not an error here (see `detect()` and `create()`).
 */
export function parseE2BSettings(settings: unknown, environment: NodeJS.ProcessEnv = process.env): ResolvedE2BSettings {
  const data = validate(e2bSettingsSchema, settings ?? {}, "settings");
  const apiKey = data.apiKey ?? (environment.E2B_API_KEY && environment.E2B_API_KEY.length > 0 ? environment.E2B_API_KEY : undefined);
  return {
    apiKey,
    domain: data.domain,
    apiUrl: data.apiUrl,
    sandboxUrl: data.sandboxUrl,
    requestTimeoutMs: data.requestTimeoutMs,
  };
}

/** The connection options to spread into the SDK's `Sandbox.create` / `Sandbox.connect`, without undefined fields. */
export function connectionOptionsOf(settings: ResolvedE2BSettings): {
  apiKey?: string;
  domain?: string;
  apiUrl?: string;
  sandboxUrl?: string;
  requestTimeoutMs?: number;
} {
  const options: Record<string, string | number> = {};
  for (const key of ["apiKey", "domain", "apiUrl", "sandboxUrl", "requestTimeoutMs"] as const) {
    const value = settings[key];
    if (value !== undefined) options[key] = value;
  }
  return options;
}

import { validate } from "@sbx/core/adapter";
import { z } from "zod";

/**
 * Settings of the Modal provider. Every field is optional; unknown fields are refused (a typo such as `tokenid`
 * would otherwise fall back to the environment silently).
 */
export const modalSettingsSchema = z
  .object({
    /** Modal token id (`ak-...`). Default: `MODAL_TOKEN_ID`, then the active profile of `~/.modal.toml`. */
    tokenId: z.string().min(1).optional(),
    /** Modal token secret (`as-...`). Default: `MODAL_TOKEN_SECRET`, then the active profile of `~/.modal.toml`. */
    tokenSecret: z.string().min(1).optional(),
    /** The Modal App sandboxes are created in (made if missing). Default `"sbx"`. */
    appName: z.string().min(1).max(64).default("sbx"),
    /** Modal environment. Default: `MODAL_ENVIRONMENT`, then the profile's, then the workspace default. */
    environment: z.string().min(1).optional(),
    /** Control-plane URL. Default: `MODAL_SERVER_URL`, then `https://api.modal.com:443`. Set it to point at the emulator. */
    serverUrl: z.string().url().optional(),
    /** Idle timeout: Modal ends the sandbox after this long with no command running and no I/O. Whole seconds (rounded up). Default: none. */
    idleTimeoutMs: z
      .number()
      .int()
      .positive()
      .max(24 * 3600 * 1000)
      .optional(),
    /** Log level of the Modal SDK. Default: the SDK's (`warn`, or `MODAL_LOGLEVEL`). */
    logLevel: z.enum(["debug", "info", "warn", "error"]).optional(),
  })
  .strict();

/** Settings of the Modal provider before validation. */
export type ModalSettings = z.input<typeof modalSettingsSchema>;

/** Settings after validation, with credentials taken from the environment when not given. */
export interface ResolvedModalSettings {
  readonly tokenId: string | undefined;
  readonly tokenSecret: string | undefined;
  readonly appName: string;
  readonly environment: string | undefined;
  readonly serverUrl: string | undefined;
  readonly idleTimeoutMs: number | undefined;
  readonly logLevel: "debug" | "info" | "warn" | "error" | undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.length > 0 ? value : undefined;
}

/**
 * Validates provider settings. Throws `InvalidArgumentError` naming the offending field (`settings.serverUrl`).
 * Token id and secret fall back to `MODAL_TOKEN_ID` / `MODAL_TOKEN_SECRET`; the server URL to `MODAL_SERVER_URL`.
 * Missing credentials are not an error here (see `detect()` and `create()`).
 */
export function parseModalSettings(settings: unknown, environment: NodeJS.ProcessEnv = process.env): ResolvedModalSettings {
  const data = validate(modalSettingsSchema, settings ?? {}, "settings");
  return {
    tokenId: data.tokenId ?? nonEmpty(environment.MODAL_TOKEN_ID),
    tokenSecret: data.tokenSecret ?? nonEmpty(environment.MODAL_TOKEN_SECRET),
    appName: data.appName,
    environment: data.environment ?? nonEmpty(environment.MODAL_ENVIRONMENT),
    serverUrl: data.serverUrl ?? nonEmpty(environment.MODAL_SERVER_URL),
    idleTimeoutMs: data.idleTimeoutMs,
    logLevel: data.logLevel,
  };
}

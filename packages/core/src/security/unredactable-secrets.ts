import { InvalidArgumentError } from "../errors/index.js";
import { MIN_SECRET_LENGTH } from "./redaction.js";

/**
 * Refuses a secret too short to redact (see `MIN_SECRET_LENGTH`). Called while the options are parsed, before any
 * backend is touched, so a refused create leaves nothing behind; `SandboxState` calls it again for values issued
 * later (credential sources).
 */
export function refuseUnredactableSecrets(secrets: Readonly<Record<string, string>>, backend?: string): void {
  for (const [name, value] of Object.entries(secrets)) {
    if (value.length >= MIN_SECRET_LENGTH) continue;
    throw new InvalidArgumentError({
      field: `options.secrets.${name}`,
      backend,
      message: `Invalid options.secrets.${name}: a secret must be at least ${MIN_SECRET_LENGTH} characters. A shorter value ("1", "true", "none") occurs by chance in unrelated text, so it cannot be redacted without destroying that text; pass it in env if it is not secret.`,
    });
  }
}

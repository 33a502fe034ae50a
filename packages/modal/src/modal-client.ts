import { ModalClient } from "modal";
import type { ResolvedModalSettings } from "./modal-settings.js";

/**
 * Makes the SDK client for a provider. `modal@0.11` reads the server URL only from `MODAL_SERVER_URL` (or
 * `~/.modal.toml`) inside the constructor (its `endpoint` parameter is ignored), so a configured `serverUrl` is put
 * in the environment for the synchronous constructor call only and restored right after; nothing else runs meanwhile.
 */
export function createModalClient(settings: ResolvedModalSettings): ModalClient {
  const previous = process.env.MODAL_SERVER_URL;
  if (settings.serverUrl) process.env.MODAL_SERVER_URL = settings.serverUrl;
  try {
    return new ModalClient({
      ...(settings.tokenId !== undefined ? { tokenId: settings.tokenId } : {}),
      ...(settings.tokenSecret !== undefined ? { tokenSecret: settings.tokenSecret } : {}),
      ...(settings.environment !== undefined ? { environment: settings.environment } : {}),
      ...(settings.logLevel !== undefined ? { logLevel: settings.logLevel } : {}),
    });
  } finally {
    if (previous === undefined) delete process.env.MODAL_SERVER_URL;
    else process.env.MODAL_SERVER_URL = previous;
  }
}

/** True when the client's profile has a token id and secret, or a complete OAuth configuration. */
export function clientHasCredentials(client: ModalClient): boolean {
  const profile = client.profile;
  return Boolean(
    (profile.tokenId && profile.tokenSecret) ||
    (profile.oauthRefreshToken && profile.oauthClientId && (profile.oauthClientSecret || profile.oauthJwtKey)),
  );
}

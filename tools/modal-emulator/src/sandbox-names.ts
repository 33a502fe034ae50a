/**
 * Sandbox names within an app, as Modal's control plane keeps them: at most one running sandbox per name and app, a
 * second create of the name refused with ALREADY_EXISTS, and `sandboxes.fromName(appName, name)` answered from them
 * (`SandboxGetFromNameV2`, and V1 `SandboxGetFromName`, the SDK's fallback). The name is claimed synchronously, before
 * the container starts, so two creates racing for one name cannot both pass (never a check, then a create later).
 */
import { ServerError, Status } from "nice-grpc";
import type { EmulatedSandbox } from "./emulated-sandbox.js";
import type { EmulatorState } from "./emulator-state.js";

/** A claimed name: the sandbox once it started, or `"starting"` while its create runs. */
type Claim = EmulatedSandbox | "starting";

/** Claims per emulator: `<app id>/<name>` → claim. */
const claimsByState = new WeakMap<EmulatorState, Map<string, Claim>>();

function claimsOf(state: EmulatorState): Map<string, Claim> {
  let claims = claimsByState.get(state);
  if (!claims) {
    claims = new Map();
    claimsByState.set(state, claims);
  }
  return claims;
}

function live(claim: Claim | undefined): boolean {
  return claim === "starting" || (claim !== undefined && !claim.finished);
}

/** A claimed name's settlement: the create's outcome, passed through. */
export interface SandboxNameClaim {
  /** The sandbox started: the claim holds it until it finishes. */
  readonly started: (sandbox: EmulatedSandbox) => EmulatedSandbox;
  /** The start failed: the name is free again; rethrows. */
  readonly failed: (error: unknown) => never;
}

/**
 * Claims `name` for a create in app `appId` now, in the same tick as the check: refused with ALREADY_EXISTS while
 * another running (or starting) sandbox of the app holds it. Without a name, nothing is claimed.
 */
export function claimSandboxName(state: EmulatorState, appId: string, name: string | undefined): SandboxNameClaim {
  const claims = claimsOf(state);
  const key = `${appId}/${name ?? ""}`;
  if (name) {
    if (live(claims.get(key))) throw new ServerError(Status.ALREADY_EXISTS, `A sandbox named ${name} already exists`);
    claims.set(key, "starting");
  }
  return {
    started: (sandbox) => {
      if (name) claims.set(key, sandbox);
      return sandbox;
    },
    failed: (error) => {
      if (name) claims.delete(key);
      throw error;
    },
  };
}

/** The app id of `appName` in `environmentName` (as `AppGetOrCreate` made it), or undefined. */
function appIdOf(state: EmulatorState, appName: string, environmentName: string | undefined): string | undefined {
  return state.apps.get(`${environmentName ?? ""}/${appName}`) ?? state.apps.get(`/${appName}`);
}

/** `SandboxGetFromName[V2]`: the running sandbox of that name in that app, else NOT_FOUND (the SDK's `NotFoundError`). */
export function sandboxIdFromName(
  state: EmulatorState,
  request: { sandboxName?: string; appName?: string; environmentName?: string },
): { sandboxId: string } {
  const appId = appIdOf(state, request.appName ?? "", request.environmentName);
  const claim = appId ? claimsOf(state).get(`${appId}/${request.sandboxName ?? ""}`) : undefined;
  if (claim === undefined || claim === "starting" || claim.finished)
    throw new ServerError(Status.NOT_FOUND, `Sandbox with name '${request.sandboxName ?? ""}' not found in App '${request.appName ?? ""}'`);
  return { sandboxId: claim.id };
}

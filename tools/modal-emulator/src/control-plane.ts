/**
 * The control-plane methods (`modal.client.ModalClient`) the SDK's Sandbox API calls, on emulator state. Errors use
 * codes the SDK does not retry (NOT_FOUND, FAILED_PRECONDITION, INVALID_ARGUMENT, UNAUTHENTICATED), so a failure is
 * reported once, not replayed four times.
 */
import { createHash } from "node:crypto";
import { ServerError, Status, type CallContext } from "nice-grpc";
import type { EmulatorState } from "./emulator-state.js";
import { EmulatedSandbox, RESULT_STATUS } from "./emulated-sandbox.js";
import { jwtLikeToken, type Handler } from "./grpc-service.js";
import { claimSandboxName, sandboxIdFromName } from "./sandbox-names.js";
import { imageStoreHandlers, removeUnusedDockerImages } from "./image-store.js";

/** Largest lifetime Modal accepts (24 hours), in seconds. */
export const MAX_TIMEOUT_SECONDS = 24 * 3600;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- gRPC messages decoded from the proto definitions at run time, untyped
type Message = Record<string, any>;

function requireCredentials(state: EmulatorState, context: CallContext): void {
  const tokenId = context.metadata.get("x-modal-token-id");
  const tokenSecret = context.metadata.get("x-modal-token-secret");
  if (tokenId !== state.credentials.tokenId || tokenSecret !== state.credentials.tokenSecret) {
    throw new ServerError(Status.UNAUTHENTICATED, "Invalid token id or secret (modal emulator)");
  }
}

function requireAuthToken(state: EmulatorState, context: CallContext): void {
  requireCredentials(state, context);
  const token = context.metadata.get("x-modal-auth-token");
  if (!token || !state.authTokens.has(String(token)))
    throw new ServerError(Status.UNAUTHENTICATED, "Missing or unknown x-modal-auth-token (modal emulator)");
}

function sandboxOf(state: EmulatorState, sandboxId: string): EmulatedSandbox {
  const sandbox = state.sandboxes.get(sandboxId);
  if (!sandbox) throw new ServerError(Status.NOT_FOUND, `Sandbox ${sandboxId} not found`);
  return sandbox;
}

function tagsOf(tags: Array<{ tagName: string; tagValue: string }> | undefined): Map<string, string> {
  return new Map((tags ?? []).map((tag) => [tag.tagName, tag.tagValue]));
}

function inlineEnvironment(sources: Array<{ secretId?: string; env?: { contents: Record<string, string> } }> | undefined): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const source of sources ?? []) {
    if (source.secretId) throw new ServerError(Status.NOT_FOUND, `Secret ${source.secretId} not found (the modal emulator has no named secrets)`);
    Object.assign(environment, source.env?.contents ?? {});
  }
  return environment;
}

/** The control-plane handlers, keyed by the ts-proto method names. */
export function controlPlaneHandlers(state: EmulatorState): Record<string, Handler> {
  async function createSandbox(request: Message, environment: Record<string, string>, v1Id: boolean): Promise<EmulatedSandbox> {
    if (!state.accepting()) throw new ServerError(Status.FAILED_PRECONDITION, "the modal emulator is stopping");
    const definition = request.definition ?? {};
    const image = state.images.get(definition.imageId);
    if (!image) throw new ServerError(Status.NOT_FOUND, `Could not find image with ID ${definition.imageId}`);
    if (image.commands.length > 1)
      throw new ServerError(Status.INVALID_ARGUMENT, "the modal emulator runs registry images as they are (no extra Dockerfile commands)");
    const requestedTimeout = definition.timeoutSecs ?? 300;
    if (requestedTimeout > MAX_TIMEOUT_SECONDS)
      throw new ServerError(Status.INVALID_ARGUMENT, `timeout must be at most ${MAX_TIMEOUT_SECONDS} seconds`);
    // A name is claimed in the same tick as its check (sandbox-names.ts): two racing creates cannot both pass.
    const name = claimSandboxName(state, request.appId, definition.name);
    const sandbox = await EmulatedSandbox.start({
      docker: state.docker,
      image: image.dockerImage ?? state.image,
      instanceId: state.instanceId,
      networkName: state.networkName,
      tags: tagsOf(request.tags),
      definition: {
        appId: request.appId,
        imageId: definition.imageId,
        imageTag: image.tag,
        entrypointArgs: definition.entrypointArgs ?? [],
        timeoutSeconds: requestedTimeout,
        idleTimeoutSeconds: definition.idleTimeoutSecs,
        workdir: definition.workdir,
        networkAccess: definition.networkAccess,
        resources: definition.resources,
        name: definition.name,
        environment,
      },
      onGone: () => undefined,
      v1Id,
      // None started ahead of demand from a snapshot image: a waiting container would keep a deleted snapshot's Docker image (ADR 0062).
      warmContainers: image.dockerImage ? undefined : state.warmContainers,
    }).then(name.started, name.failed);
    state.sandboxes.set(sandbox.id, sandbox);
    return sandbox;
  }

  const handlers: Record<string, (request: Message, context: CallContext) => Promise<Message>> = {
    async authTokenGet(_request, context) {
      requireCredentials(state, context);
      const token = jwtLikeToken("modal-emulator");
      state.authTokens.add(token);
      return { token };
    },

    async environmentGetOrCreate(request, context) {
      requireAuthToken(state, context);
      return {
        environmentId: "en-emulator",
        metadata: { name: request.deploymentName || "main", settings: { imageBuilderVersion: "2025.06", webhookSuffix: "" } },
      };
    },

    async appGetOrCreate(request, context) {
      requireAuthToken(state, context);
      const key = `${request.environmentName ?? ""}/${request.appName}`;
      let appId = state.apps.get(key);
      if (!appId) {
        if (request.objectCreationType !== 1) throw new ServerError(Status.NOT_FOUND, `App '${request.appName}' not found`);
        appId = `ap-emu${createHash("sha256").update(key).digest("hex").slice(0, 19)}`;
        state.apps.set(key, appId);
      }
      return { appId };
    },

    async imageGetOrCreate(request, context) {
      requireAuthToken(state, context);
      const commands: string[] = request.image?.dockerfileCommands ?? [];
      const imageId = `im-emu${createHash("sha256").update(JSON.stringify(commands)).digest("hex").slice(0, 19)}`;
      const from = commands.find((command) => command.startsWith("FROM "));
      state.images.set(imageId, { tag: from?.slice(5).trim(), commands });
      return { imageId, result: { status: RESULT_STATUS.SUCCESS } };
    },

    async imageFromId(request, context) {
      requireAuthToken(state, context);
      if (!state.images.has(request.imageId)) throw new ServerError(Status.NOT_FOUND, `Could not find image with ID ${request.imageId}`);
      return { imageId: request.imageId };
    },

    ...imageStoreHandlers(state, (context) => requireAuthToken(state, context as CallContext)),

    async sandboxCreateV2(request, context) {
      requireAuthToken(state, context);
      const sandbox = await createSandbox(request, inlineEnvironment(request.secretSources), false);
      return { sandboxId: sandbox.id, taskId: sandbox.taskId, tunnels: [], commandRouterAccess: state.routerAccess() };
    },

    async secretGetOrCreate(request, context) {
      requireAuthToken(state, context);
      if (request.objectCreationType !== 5)
        throw new ServerError(Status.NOT_FOUND, `Secret '${request.deploymentName}' not found (the modal emulator has only ephemeral secrets)`);
      const secretId = `st-emu${createHash("sha256")
        .update(`${state.secrets.size}:${JSON.stringify(request.envDict ?? {})}`)
        .digest("hex")
        .slice(0, 19)}`;
      state.secrets.set(secretId, { ...(request.envDict ?? {}) });
      return { secretId };
    },

    // The V1 path (modal 0.10's default, and 0.11 with MODAL_SANDBOX_V2=0): V1-shaped ids, env through ephemeral secrets.
    async sandboxCreate(request, context) {
      requireAuthToken(state, context);
      const environment: Record<string, string> = {};
      for (const secretId of request.definition?.secretIds ?? []) {
        const secret = state.secrets.get(secretId);
        if (!secret) throw new ServerError(Status.NOT_FOUND, `Secret ${secretId} not found`);
        Object.assign(environment, secret);
      }
      const sandbox = await createSandbox(request, environment, true);
      return { sandboxId: sandbox.id };
    },

    async sandboxGetTaskId(request, context) {
      return handlers.sandboxGetTaskIdV2!(request, context);
    },

    async taskGetCommandRouterAccess(request, context) {
      requireAuthToken(state, context);
      const sandbox = [...state.sandboxes.values()].find((candidate) => candidate.taskId === request.taskId);
      if (!sandbox) throw new ServerError(Status.NOT_FOUND, `Task ${request.taskId} not found`);
      if (sandbox.finished) throw new ServerError(Status.FAILED_PRECONDITION, `Task ${request.taskId} has finished`);
      return state.routerAccess();
    },

    async sandboxWait(request, context) {
      return handlers.sandboxWaitV2!(request, context);
    },

    async sandboxTerminate(request, context) {
      return handlers.sandboxTerminateV2!(request, context);
    },

    async sandboxGetTaskIdV2(request, context) {
      requireAuthToken(state, context);
      const sandbox = sandboxOf(state, request.sandboxId);
      if (sandbox.result) return { taskResult: sandbox.result };
      return { taskId: sandbox.taskId };
    },

    async sandboxGetCommandRouterAccess(request, context) {
      requireAuthToken(state, context);
      const sandbox = sandboxOf(state, request.sandboxId);
      if (sandbox.finished) throw new ServerError(Status.FAILED_PRECONDITION, `Sandbox ${sandbox.id} has finished`);
      return { ...state.routerAccess(), workerIpv4Address: "127.0.0.1" };
    },

    async sandboxTerminateV2(request, context) {
      requireAuthToken(state, context);
      const sandbox = sandboxOf(state, request.sandboxId);
      const existing = sandbox.result;
      await sandbox.end({ status: RESULT_STATUS.TERMINATED, exception: "Sandbox terminated" });
      // A deleted snapshot image this sandbox ran from is removed once no container uses it (ADR 0062).
      await removeUnusedDockerImages(state);
      return existing ? { existingResult: existing } : {};
    },

    async sandboxWaitV2(request, context) {
      requireAuthToken(state, context);
      const sandbox = sandboxOf(state, request.sandboxId);
      const result = await sandbox.waitForResult(Math.min(Number(request.timeout ?? 0), 55), context.signal);
      return { result, metadata: { result, appId: sandbox.definition.appId } };
    },

    async sandboxListV2(request, context) {
      requireAuthToken(state, context);
      const wanted = tagsOf(request.tags);
      const before = request.beforeTimestamp ? Number(request.beforeTimestamp) : Number.POSITIVE_INFINITY;
      const sandboxes = [...state.sandboxes.values()]
        .filter(
          (sandbox) =>
            (request.includeFinished || !sandbox.finished) &&
            (!request.appId || sandbox.definition.appId === request.appId) &&
            sandbox.createdAt < before,
        )
        .filter((sandbox) => [...wanted].every(([name, value]) => sandbox.tags.get(name) === value))
        .sort((a, b) => b.createdAt - a.createdAt)
        .slice(0, 100);
      return {
        sandboxes: sandboxes.map((sandbox) => ({
          id: sandbox.id,
          createdAt: sandbox.createdAt,
          appId: sandbox.definition.appId,
          tags: [...sandbox.tags].map(([tagName, tagValue]) => ({ tagName, tagValue })),
          name: sandbox.definition.name ?? "",
          imageId: sandbox.definition.imageId,
          timeoutSecs: sandbox.definition.timeoutSeconds,
        })),
      };
    },

    async sandboxGetFromNameV2(request, context) {
      requireAuthToken(state, context);
      return sandboxIdFromName(state, request);
    },

    async sandboxGetFromName(request, context) {
      requireAuthToken(state, context);
      return sandboxIdFromName(state, request);
    },

    async sandboxTagsGetV2(request, context) {
      requireAuthToken(state, context);
      const sandbox = sandboxOf(state, request.sandboxId);
      return { tags: [...sandbox.tags].map(([tagName, tagValue]) => ({ tagName, tagValue })) };
    },

    async sandboxTagsSetV2(request, context) {
      requireAuthToken(state, context);
      const sandbox = sandboxOf(state, request.sandboxId);
      sandbox.tags.clear();
      for (const [name, value] of tagsOf(request.tags)) sandbox.tags.set(name, value);
      return {};
    },
  };
  return handlers as unknown as Record<string, Handler>;
}

export {
  SbxSandboxClient,
  SbxSandboxSession,
  DEFAULT_COMMAND_TIMEOUT_MS,
  type SbxSandboxClientOptions,
  type SbxSandboxSessionState,
} from "./sbx-sandbox-client.js";

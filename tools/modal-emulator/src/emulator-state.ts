/** State shared by the emulator's control plane and task command router. */
import type Docker from "dockerode";
import type { WarmContainerPool } from "@sbx/emulator-kit";
import type { EmulatedSandbox } from "./emulated-sandbox.js";
import type { ImageStoreState } from "./image-store.js";
import type { PreparedContainer } from "./sandbox-container.js";

/** Everything the handlers need. */
export interface EmulatorState {
  readonly docker: Docker;
  readonly image: string;
  readonly instanceId: string;
  readonly networkName: string;
  /** The token id and secret the control plane accepts. */
  readonly credentials: { readonly tokenId: string; readonly tokenSecret: string };
  /** Auth tokens handed out by AuthTokenGet. */
  readonly authTokens: Set<string>;
  /** The JWT every task command router call must carry as `authorization: Bearer`. */
  readonly routerJwt: string;
  /** App name (with environment) → app id. */
  readonly apps: Map<string, string>;
  /** Image id → the registry tag and Dockerfile commands it was made from (`dockerImage`: a filesystem snapshot's own image, ADR 0062). */
  readonly images: Map<string, { tag: string | undefined; commands: string[]; dockerImage?: string }>;
  /** Filesystem snapshots and named images (ADR 0062). */
  readonly imageStore: ImageStoreState;
  /** Ephemeral secrets (id → environment) made by SecretGetOrCreate for V1 creates. */
  readonly secrets: Map<string, Record<string, string>>;
  /** Every sandbox this emulator made, finished ones included (so poll, wait and exec answer correctly). */
  readonly sandboxes: Map<string, EmulatedSandbox>;
  /** The router access record handed to the SDK: `https://127.0.0.1:<port>` (dialled in plaintext on loopback). */
  routerAccess(): { jwt: string; url: string };
  /** False once `stop()` began. */
  accepting(): boolean;
  /** Containers started ahead of demand (ADR 0041). */
  readonly warmContainers?: WarmContainerPool<PreparedContainer>;
}

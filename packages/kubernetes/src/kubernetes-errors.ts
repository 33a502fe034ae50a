import { ProviderError } from "@sbx/core";

/** One Pod event, as the errors carry it. */
export interface PodEvent {
  readonly reason: string;
  readonly message: string;
}

/**
 * The cluster could not schedule the sandbox's Pod within the create timeout (no node with the CPU or memory asked,
 * taints, a missing RuntimeClass). Code `SBX_PROVIDER`, retryable (capacity may free up); `events` are the
 * Pod's events, the scheduler's own words. The Pod was deleted.
 */
export class PodUnschedulableError extends ProviderError {
  /** The Pod's events when it was given up on. */
  readonly events: readonly PodEvent[];

  constructor(options: { message: string; events: readonly PodEvent[] }) {
    super({ backend: "k8s", retryable: true, message: options.message });
    this.name = "PodUnschedulableError";
    this.events = options.events;
  }
}

/**
 * The node could not pull the sandbox's image (`ErrImagePull`, `ImagePullBackOff`, `InvalidImageName`). Code
 * `SBX_PROVIDER`, not retryable (a wrong name or missing pull credentials do not fix themselves); `reason` is
 * the kubelet's. The Pod was deleted.
 */
export class ImagePullError extends ProviderError {
  /** The kubelet's waiting reason. */
  readonly reason: string;
  /** The image that failed. */
  readonly image: string;

  constructor(options: { message: string; reason: string; image: string }) {
    super({ backend: "k8s", retryable: false, message: options.message });
    this.name = "ImagePullError";
    this.reason = options.reason;
    this.image = options.image;
  }
}

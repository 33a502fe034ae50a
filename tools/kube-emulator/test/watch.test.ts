/**
 * The emulator's watch through the unmodified client-node `Watch`: `?watch=true` with a label selector and a
 * `resourceVersion` streams ADDED/MODIFIED/DELETED as newline-delimited JSON; a version older than the emulator keeps
 * (after a compaction, or by the forced-expiry switch) gets an ERROR event with a 410 `Status` (reason `Expired`);
 * 404 and 409 Status objects carry the kind's group as the real API server's do.
 */
import { CoreV1Api, KubeConfig, NetworkingV1Api, Watch, type V1NetworkPolicy, type V1Pod } from "@kubernetes/client-node";
import { shareEmulator } from "@sbx/emulator-kit/testing";
import { describe, expect, it } from "vitest";
import { startKubeEmulator, type KubeEmulator } from "../src/index.js";

const shared = shareEmulator({ start: () => startKubeEmulator(), backend: "k8s", label: "kube-emulator" });

function clients(emulator: KubeEmulator) {
  const config = new KubeConfig();
  config.loadFromString(emulator.kubeconfig);
  return { watch: new Watch(config), core: config.makeApiClient(CoreV1Api), networking: config.makeApiClient(NetworkingV1Api) };
}

function policy(name: string, labels: Record<string, string>): V1NetworkPolicy {
  return { metadata: { name, labels }, spec: { podSelector: { matchLabels: { app: name } }, policyTypes: ["Egress"], egress: [] } };
}

interface Seen {
  readonly type: string;
  readonly object: { metadata?: { name?: string; resourceVersion?: string }; code?: number; reason?: string; status?: { phase?: string } };
}

/** Watches `path` and collects events until `until` says so or the stream ends. */
async function collect(
  watch: Watch,
  path: string,
  query: Record<string, string>,
  until: (seen: Seen[]) => boolean,
): Promise<{ seen: Seen[]; ended: boolean }> {
  const seen: Seen[] = [];
  let ended = false;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const timer = setTimeout(finish, 20_000);
  const controller = await watch.watch(
    path,
    query,
    (type, object) => {
      seen.push({ type, object: object as Seen["object"] });
      if (until(seen)) finish();
    },
    () => {
      ended = true;
      finish();
    },
  );
  await finished;
  clearTimeout(timer);
  controller.abort();
  return { seen, ended };
}

const POLICIES = "/apis/networking.k8s.io/v1/namespaces/sbx/networkpolicies";

describe("kube emulator watch", () => {
  it("streams ADDED and DELETED after a resourceVersion, filtered by label selector, and the current objects from version 0", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const { watch, networking } = clients(shared.emulator);
    const first = await networking.createNamespacedNetworkPolicy({ namespace: "sbx", body: policy("watch-a", { suite: "watch" }) });
    const from = first.metadata!.resourceVersion!;
    await networking.createNamespacedNetworkPolicy({ namespace: "sbx", body: policy("watch-other", { suite: "other" }) });
    await networking.createNamespacedNetworkPolicy({ namespace: "sbx", body: policy("watch-b", { suite: "watch" }) });
    await networking.deleteNamespacedNetworkPolicy({ namespace: "sbx", name: "watch-a" });
    const replayed = await collect(watch, POLICIES, { labelSelector: "suite=watch", resourceVersion: from }, (seen) => seen.length >= 2);
    expect(replayed.seen.map((event) => [event.type, event.object.metadata?.name])).toEqual([
      ["ADDED", "watch-b"],
      ["DELETED", "watch-a"],
    ]);
    expect(Number(replayed.seen[1]!.object.metadata?.resourceVersion)).toBeGreaterThan(Number(replayed.seen[0]!.object.metadata?.resourceVersion));

    const current = await collect(watch, POLICIES, { labelSelector: "suite=watch", resourceVersion: "0" }, (seen) => seen.length >= 1);
    expect(current.seen.map((event) => [event.type, event.object.metadata?.name])).toEqual([["ADDED", "watch-b"]]);

    // Live: a watch open before the change sees it.
    const live = collect(
      watch,
      POLICIES,
      { labelSelector: "suite=watch", resourceVersion: replayed.seen[1]!.object.metadata!.resourceVersion! },
      (seen) => seen.some((event) => event.type === "DELETED"),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await networking.deleteNamespacedNetworkPolicy({ namespace: "sbx", name: "watch-b" });
    expect((await live).seen.map((event) => [event.type, event.object.metadata?.name])).toEqual([["DELETED", "watch-b"]]);
    await networking.deleteNamespacedNetworkPolicy({ namespace: "sbx", name: "watch-other" });
  });

  it("answers a resourceVersion older than it keeps with an ERROR event carrying 410 Expired, and ends the stream", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const { watch, networking } = clients(shared.emulator);
    const created = await networking.createNamespacedNetworkPolicy({ namespace: "sbx", body: policy("watch-old", { suite: "old" }) });
    await networking.createNamespacedNetworkPolicy({ namespace: "sbx", body: policy("watch-newer", { suite: "newer" }) });
    shared.emulator.compact();
    const expired = await collect(watch, POLICIES, { resourceVersion: created.metadata!.resourceVersion! }, () => false);
    expect(expired.ended).toBe(true);
    expect(expired.seen).toHaveLength(1);
    expect(expired.seen[0]!.type).toBe("ERROR");
    expect(expired.seen[0]!.object).toMatchObject({ kind: "Status", status: "Failure", code: 410, reason: "Expired" });
    expect((expired.seen[0]!.object as { message?: string }).message).toMatch(/^too old resource version: \d+ \(\d+\)$/);

    // The forced expiry answers the next watch 410 whatever its version, then watches work again.
    shared.emulator.expireNextWatches(1);
    const forced = await collect(watch, POLICIES, { resourceVersion: "0" }, () => false);
    expect(forced.seen.map((event) => [event.type, event.object.code, event.object.reason])).toEqual([["ERROR", 410, "Expired"]]);
    const again = await collect(watch, POLICIES, { labelSelector: "suite=old", resourceVersion: "0" }, (seen) => seen.length >= 1);
    expect(again.seen.map((event) => [event.type, event.object.metadata?.name])).toEqual([["ADDED", "watch-old"]]);
    await networking.deleteNamespacedNetworkPolicy({ namespace: "sbx", name: "watch-old" });
    await networking.deleteNamespacedNetworkPolicy({ namespace: "sbx", name: "watch-newer" });
  });

  it("shapes 404 and 409 as the API server does (details with the kind and, for networkpolicies, the group)", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const { networking } = clients(shared.emulator);
    const missing = (await networking.readNamespacedNetworkPolicy({ namespace: "sbx", name: "nope" }).catch((caught: unknown) => caught)) as {
      code?: number;
      body?: string;
    };
    expect(missing.code).toBe(404);
    expect(JSON.parse(missing.body!)).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'networkpolicies "nope" not found',
      reason: "NotFound",
      details: { name: "nope", group: "networking.k8s.io", kind: "networkpolicies" },
      code: 404,
    });
    await networking.createNamespacedNetworkPolicy({ namespace: "sbx", body: policy("twice", {}) });
    const duplicate = (await networking
      .createNamespacedNetworkPolicy({ namespace: "sbx", body: policy("twice", {}) })
      .catch((caught: unknown) => caught)) as {
      code?: number;
      body?: string;
    };
    expect(duplicate.code).toBe(409);
    expect(JSON.parse(duplicate.body!)).toMatchObject({
      reason: "AlreadyExists",
      code: 409,
      message: 'networkpolicies "twice" already exists',
      details: { name: "twice", group: "networking.k8s.io", kind: "networkpolicies" },
    });
    await networking.deleteNamespacedNetworkPolicy({ namespace: "sbx", name: "twice" });
  });

  it("streams a Pod's MODIFIED events up to Running, then DELETED", async (context) => {
    if (!shared.emulator) return context.skip(shared.unavailable);
    const { watch, core } = clients(shared.emulator);
    const body: V1Pod = {
      metadata: { name: "watched-pod", labels: { suite: "pod-watch" } },
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "sandbox", image: "sbx-test/python:3.11", command: ["sleep", "600"], securityContext: { runAsUser: 1000 } }],
      },
    };
    const created = await core.createNamespacedPod({ namespace: "sbx", body });
    const running = await collect(
      watch,
      "/api/v1/namespaces/sbx/pods",
      { labelSelector: "suite=pod-watch", resourceVersion: created.metadata!.resourceVersion! },
      (seen) => seen.some((event) => event.object.status?.phase === "Running"),
    );
    expect(running.seen.every((event) => event.type === "MODIFIED" && event.object.metadata?.name === "watched-pod")).toBe(true);
    expect(running.seen.at(-1)!.object.status?.phase).toBe("Running");
    const from = running.seen.at(-1)!.object.metadata!.resourceVersion!;
    await core.deleteNamespacedPod({ namespace: "sbx", name: "watched-pod" });
    const deleted = await collect(
      watch,
      "/api/v1/namespaces/sbx/pods",
      { labelSelector: "suite=pod-watch", resourceVersion: from },
      (seen) => seen.length >= 1,
    );
    expect(deleted.seen.map((event) => event.type)).toEqual(["DELETED"]);
  });
});

/**
 * The snapshot listing and deletion scheme on Modal (ADR 0062), against a stand-in of the two control-plane calls it
 * makes (`ImageListTags`, `ImageNameDelete`) and `images.delete`: pages are followed to the end, names that are not
 * exactly `sbx-snapshot:<own image id>` are left out, a listing past 10 000 or a repeated page is an error (never a
 * cut list), and only a published sbx snapshot is ever deleted.
 */
import { isSbxError } from "@sbx/core";
import type { ModalClient } from "modal";
import { describe, expect, it } from "vitest";
import { deleteModalSnapshot, listModalSnapshots, LONGEST_SNAPSHOT_LISTING, type ModalSnapshotStore } from "../src/modal-snapshots.js";

interface Item {
  tag: string;
  imageId: string;
  createdAt: number;
}

/** A store whose `ImageListTags` answers `pages` in turn (the token of page n is `"p<n>"`), recording every call. */
function storeOf(pages: Item[][], options: { repeatToken?: boolean } = {}) {
  const calls: string[] = [];
  const items = pages.flat();
  const modal = {
    environmentName: (environment?: string) => environment ?? "",
    cpClient: {
      imageListTags: async (request: { tagPrefix: string; pageToken?: string; imageId?: string }) => {
        calls.push(`list ${request.tagPrefix} ${request.pageToken ?? ""} ${request.imageId ?? ""}`);
        if (request.imageId) return { items: items.filter((item) => item.imageId === request.imageId), nextPageToken: "" };
        const index = request.pageToken ? Number(request.pageToken.slice(1)) : 0;
        const last = index + 1 >= pages.length;
        return { items: pages[index] ?? [], nextPageToken: last ? "" : options.repeatToken ? "p1" : `p${index + 1}` };
      },
      imageNameDelete: async (request: { tag: string }) => {
        calls.push(`name-delete ${request.tag}`);
        return {};
      },
    },
    images: {
      delete: async (id: string) => {
        calls.push(`image-delete ${id}`);
      },
    },
  };
  const store: ModalSnapshotStore = { modal: modal as unknown as ModalClient, environment: undefined };
  return { store, calls };
}

const snapshot = (id: string, createdAt = 1_800_000_000): Item => ({ tag: `sbx-snapshot:${id}`, imageId: id, createdAt });

describe("Modal snapshot listing", () => {
  it("follows every page and keeps only names that are exactly sbx-snapshot:<their own image id>", async () => {
    const { store, calls } = storeOf([
      [snapshot("im-aaa", 1_800_000_000.25), { tag: "sbx-snapshot:im-other", imageId: "im-bbb", createdAt: 1 }],
      [snapshot("im-ccc"), { tag: "sbx-snapshot:latest", imageId: "latest", createdAt: 1 }],
    ]);
    const listed = await listModalSnapshots(store, undefined);
    expect(listed).toEqual([
      { id: "im-aaa", createdAt: "2027-01-15T08:00:00.250Z", backend: "modal" },
      { id: "im-ccc", createdAt: "2027-01-15T08:00:00.000Z", backend: "modal" },
    ]);
    expect(calls).toEqual(["list sbx-snapshot:  ", "list sbx-snapshot: p1 "]);
  });

  it(`refuses more than ${LONGEST_SNAPSHOT_LISTING} snapshots rather than cut the list`, async () => {
    const pages = Array.from({ length: LONGEST_SNAPSHOT_LISTING / 100 + 1 }, (_, page) =>
      Array.from({ length: 100 }, (_, index) => snapshot(`im-${page}x${index}`)),
    );
    const refused = await listModalSnapshots(storeOf(pages).store, undefined).catch((error: unknown) => error);
    expect(isSbxError(refused, "SBX_PROVIDER")).toBe(true);
    expect(String((refused as Error).message)).toContain("refused rather than cut");
    // Exactly the bound is listed whole.
    expect((await listModalSnapshots(storeOf(pages.slice(0, -1)).store, undefined)).length).toBe(LONGEST_SNAPSHOT_LISTING);
  });

  it("refuses a listing whose page token repeats", async () => {
    const { store } = storeOf([[snapshot("im-a")], [snapshot("im-b")], [snapshot("im-c")]], { repeatToken: true });
    const refused = await listModalSnapshots(store, undefined).catch((error: unknown) => error);
    expect(isSbxError(refused, "SBX_PROVIDER")).toBe(true);
  });
});

describe("Modal snapshot deletion", () => {
  it("deletes the image, then its name, for a published sbx snapshot", async () => {
    const { store, calls } = storeOf([[snapshot("im-aaa")]]);
    expect(await deleteModalSnapshot(store, "im-aaa", undefined)).toBe(true);
    expect(calls.slice(1)).toEqual(["image-delete im-aaa", "name-delete sbx-snapshot:im-aaa"]);
  });

  it("answers false for an image id with no sbx-snapshot name (never deleting it), and refuses an id that is not a Modal image id", async () => {
    const { store, calls } = storeOf([[{ tag: "my-app:latest", imageId: "im-theirs", createdAt: 1 }]]);
    expect(await deleteModalSnapshot(store, "im-theirs", undefined)).toBe(false);
    expect(calls.filter((call) => !call.startsWith("list"))).toEqual([]);
    const refused = await deleteModalSnapshot(store, "sbx-snapshot:im-theirs", undefined).catch((error: unknown) => error);
    expect(isSbxError(refused, "SBX_INVALID_ARGUMENT")).toBe(true);
  });
});

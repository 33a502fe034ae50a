import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipDockerTests } from "./docker-availability.js";
import { emulatorForSuite } from "./emulator-fixture.js";
import { sdkVersions } from "./sdk-versions.js";

const binary = Uint8Array.from({ length: 70_000 }, (_, index) => (index * 7 + 3) % 256);

describe.skipIf(skipDockerTests)("files (envd filesystem service and /files)", () => {
  const emulator = emulatorForSuite();

  describe.each(sdkVersions)("%s", (_label, Sandbox) => {
    let sandbox: InstanceType<typeof Sandbox>;
    beforeAll(async () => {
      sandbox = await Sandbox.create(emulator().connectionOptions);
    });
    afterAll(async () => {
      await sandbox?.kill();
    });

    it("writes and reads binary content, owned by the default user", async () => {
      const info = await sandbox.files.write("/home/user/data/blob.bin", binary.buffer as ArrayBuffer);
      expect(info).toMatchObject({ name: "blob.bin", path: "/home/user/data/blob.bin" });
      const read = await sandbox.files.read("/home/user/data/blob.bin", { format: "bytes" });
      expect(Buffer.from(read).equals(Buffer.from(binary))).toBe(true);
      const text = await sandbox.files.write("relative.txt", "héllo\n");
      expect(text.path).toBe("/home/user/relative.txt");
      expect(await sandbox.files.read("/home/user/relative.txt")).toBe("héllo\n");
      const stat = await sandbox.files.getInfo("/home/user/data/blob.bin");
      expect(stat).toMatchObject({ type: "file", size: binary.length, owner: "user", name: "blob.bin" });
      expect(await sandbox.files.read("/home/user/empty.txt").catch((error: Error) => error.name)).toBe("FileNotFoundError");
      await sandbox.files.write("/home/user/empty.txt", "");
      expect(await sandbox.files.read("/home/user/empty.txt")).toBe("");
    });

    it("writes several files at once", async () => {
      const written = await sandbox.files.write([
        { path: "/home/user/many/a.txt", data: "A" },
        { path: "/home/user/many/b.txt", data: new Blob(["B"]) },
      ]);
      expect(written.map((entry) => entry.path).sort()).toEqual(["/home/user/many/a.txt", "/home/user/many/b.txt"]);
      expect(await sandbox.files.read("/home/user/many/b.txt")).toBe("B");
    });

    it("lists, checks existence, makes directories, renames and removes", async () => {
      expect(await sandbox.files.makeDir("/home/user/tree/inner")).toBe(true);
      expect(await sandbox.files.makeDir("/home/user/tree/inner")).toBe(false);
      await sandbox.files.write("/home/user/tree/one.txt", "1");
      const entries = await sandbox.files.list("/home/user/tree");
      expect(entries.map((entry) => [entry.name, entry.type])).toEqual([
        ["inner", "dir"],
        ["one.txt", "file"],
      ]);
      const deep = await sandbox.files.list("/home/user", { depth: 3 });
      expect(deep.map((entry) => entry.path)).toContain("/home/user/tree/inner");
      expect(await sandbox.files.exists("/home/user/tree/one.txt")).toBe(true);
      expect(await sandbox.files.exists("/home/user/tree/missing")).toBe(false);
      const moved = await sandbox.files.rename("/home/user/tree/one.txt", "/home/user/tree/inner/two.txt");
      expect(moved).toMatchObject({ name: "two.txt", path: "/home/user/tree/inner/two.txt", type: "file" });
      expect(await sandbox.files.read("/home/user/tree/inner/two.txt")).toBe("1");
      await sandbox.files.remove("/home/user/tree");
      expect(await sandbox.files.exists("/home/user/tree")).toBe(false);
      await expect(sandbox.files.list("/home/user/tree")).rejects.toMatchObject({ name: "FileNotFoundError" });
    });

    it("works as root like envd: writes anywhere, creates missing parents, and gives the file and new parents to the user", async () => {
      await sandbox.files.write("/root/secret.txt", "x");
      expect(await sandbox.files.read("/root/secret.txt")).toBe("x");
      expect((await sandbox.files.getInfo("/root/secret.txt")).owner).toBe("user");
      expect((await sandbox.files.getInfo("/root/secret.txt", { user: "root" })).owner).toBe("user");
      await sandbox.files.write("/opt/new-parent/inner/file.txt", "y");
      for (const path of ["/opt/new-parent", "/opt/new-parent/inner", "/opt/new-parent/inner/file.txt"]) {
        expect((await sandbox.files.getInfo(path)).owner).toBe("user");
      }
      expect((await sandbox.files.getInfo("/opt")).owner).toBe("root");
      await sandbox.files.write("/opt/as-root.txt", "z", { user: "root" });
      expect((await sandbox.files.getInfo("/opt/as-root.txt")).owner).toBe("root");
      // A file only root may read is read all the same (envd opens it as root).
      expect(await sandbox.files.read("/etc/shadow")).toContain("root:");
      await sandbox.commands.run("rm -rf /root/secret.txt /opt/new-parent /opt/as-root.txt", { user: "root" });
    });

    it("lists directories in lexical order, depth first, as envd's WalkDir does", async () => {
      for (const name of ["b.txt", "a/z.txt", "c.txt", "a/b/y.txt", "B.txt"]) await sandbox.files.write(`/home/user/ordered/${name}`, name);
      const listed = await sandbox.files.list("/home/user/ordered", { depth: 3 });
      expect(listed.map((entry) => entry.path.replace("/home/user/ordered/", ""))).toEqual([
        "B.txt",
        "a",
        "a/b",
        "a/b/y.txt",
        "a/z.txt",
        "b.txt",
        "c.txt",
      ]);
      await sandbox.files.remove("/home/user/ordered");
    });

    it("reports symlinks as envd does (type of the target, fully resolved target path), follows them when listing, and removes a missing path quietly", async () => {
      await sandbox.commands.run(
        "mkdir -p /home/user/links/real && echo data > /home/user/links/real/f.txt && ln -sfn real /home/user/links/to-dir && ln -sfn real/f.txt /home/user/links/to-file && ln -sfn /nowhere /home/user/links/dangling",
      );
      expect(await sandbox.files.getInfo("/home/user/links/to-file")).toMatchObject({ type: "file", symlinkTarget: "/home/user/links/real/f.txt" });
      expect(await sandbox.files.getInfo("/home/user/links/to-dir")).toMatchObject({ type: "dir", symlinkTarget: "/home/user/links/real" });
      const dangling = await sandbox.files.getInfo("/home/user/links/dangling");
      expect(dangling.type).toBeUndefined();
      expect(dangling.symlinkTarget).toBe("/home/user/links/dangling");
      expect((await sandbox.files.list("/home/user/links/to-dir")).map((entry) => entry.path)).toEqual(["/home/user/links/to-dir/f.txt"]);
      await sandbox.files.remove("/home/user/links/missing");
      await sandbox.files.remove("/home/user/links");
      expect(await sandbox.files.exists("/home/user/links")).toBe(false);
    });
  });

  it("answers concurrent filesystem calls and survives the death of its filesystem helper", async () => {
    const { Sandbox } = await import("e2b");
    const sandbox = await Sandbox.create(emulator().connectionOptions);
    try {
      const names = Array.from({ length: 12 }, (_, index) => `dir-${index}`);
      const made = await Promise.all(names.map((name) => sandbox.files.makeDir(`/home/user/concurrent/${name}`)));
      expect(made).toEqual(names.map(() => true));
      const infos = await Promise.all(names.map((name) => sandbox.files.getInfo(`/home/user/concurrent/${name}`)));
      expect(infos.map((info) => info.name)).toEqual(names);
      // Kill the helper (a python3 process whose command line holds the helper source; the bracket keeps this shell from matching itself).
      const killed = await sandbox.commands.run(
        `for process in /proc/[0-9]*; do grep -q "_lstat_exist[i]ng" "$process/cmdline" 2>/dev/null && kill -9 "\${process#/proc/}" && echo killed; done; true`,
        { user: "root" },
      );
      expect(killed.stdout).toContain("killed");
      // The next call starts a new helper.
      expect((await sandbox.files.list("/home/user/concurrent")).length).toBe(names.length);
      expect(await sandbox.files.exists("/home/user/concurrent/dir-3")).toBe(true);
    } finally {
      await sandbox.kill();
    }
  });

  it("accepts octet-stream and gzip uploads (e2b 2.51)", async () => {
    const { Sandbox } = await import("e2b");
    const sandbox = await Sandbox.create(emulator().connectionOptions);
    try {
      await sandbox.files.write("/home/user/stream.bin", binary.buffer as ArrayBuffer, { useOctetStream: true } as never);
      expect(Buffer.from(await sandbox.files.read("/home/user/stream.bin", { format: "bytes" })).equals(Buffer.from(binary))).toBe(true);
      await sandbox.files.write("/home/user/gzip.bin", binary.buffer as ArrayBuffer, { gzip: true } as never);
      expect(Buffer.from(await sandbox.files.read("/home/user/gzip.bin", { format: "bytes" })).equals(Buffer.from(binary))).toBe(true);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("streamed "));
          controller.enqueue(new TextEncoder().encode("content"));
          controller.close();
        },
      });
      await sandbox.files.write("/home/user/from-stream.txt", stream as never);
      expect(await sandbox.files.read("/home/user/from-stream.txt")).toBe("streamed content");
    } finally {
      await sandbox.kill();
    }
  });
});

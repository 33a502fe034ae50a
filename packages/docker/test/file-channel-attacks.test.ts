import type { Sandbox } from "@sbx/core";
import { expect, it } from "vitest";
import { createTestSandbox, describeWithDocker } from "./docker-test-environment.js";

/**
 * Issue 19, performed from inside the sandbox against the public API (ADR 0031): a process of the sandbox user
 * writing into the file helper's stdout through /proc/<pid>/fd/1, names that are not UTF-8, and paths flipped between
 * a file (or folder) and a symbolic link while the host uses them.
 */

/** Watches /proc for sbx's file helpers (their argv carries `sbx-`) and writes forged answers into their stdout. */
const INJECTOR = String.raw`
import os, sys, time
deadline = time.time() + float(sys.argv[1])
opened = 0
forged = (b"regular file|31337|0\n/workspace/many/../../../../home/user/.bashrc\0INJECTED-BY-SANDBOX\n"
          b"sbx-list 1\nf 31337 0 6\nforged\nsbx-end\nsbx-stat f 999999 0\n")
me = str(os.getpid())
while time.time() < deadline and not os.path.exists("/workspace/stop-injecting"):
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if b"sbx-" not in f.read():
                    continue
            fd = os.open("/proc/%s/fd/1" % pid, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue
        opened += 1
        try:
            os.write(fd, forged)
        except OSError:
            pass
        os.close(fd)
with open("/workspace/injector-opened", "w") as f:
    f.write(str(opened))
`;

/**
 * Host-side operations per flip race. The check-then-use helpers these races caught lost about 1 in 7 on Docker (28
 * of 200 reads, ADR 0031), so a helper that loses at that rate passes 60 rounds with probability (6/7)^60, about 1 in
 * 10 000; 200 reads and 150 writes (one helper exec each, ~0.3 s under CI load) cost over 100 s of the file's run.
 */
const FLIP_ROUNDS = 60;

describeWithDocker("file operations against attacks from inside the sandbox (issue 19, ADR 0031)", () => {
  // One sandbox per attack: a slow run of one must not end another's lifetime.
  const fresh = (): Promise<Sandbox> => createTestSandbox();

  it(
    "a sandbox process cannot write into the file helper's output: list, stat and read stay exact while it tries",
    { timeout: 300_000 },
    async () => {
      await using sandbox = await fresh();
      await sandbox.files.write("injector.py", INJECTOR);
      expect((await sandbox.commands.run("mkdir many && cd many && seq 1 3000 | xargs touch && printf hello > ../real.txt")).exitCode).toBe(0);
      const injector = await sandbox.commands.start("python3 injector.py 120");
      const rounds = 3;
      let invented = 0;
      const statSizes = new Set<number>();
      const reads = new Set<string>();
      for (let round = 0; round < rounds; round++) {
        const listing = await sandbox.files.list("many").catch((error: unknown) => error);
        if (Array.isArray(listing))
          invented += listing.filter((entry) => !/^\d+$/.test(entry.name) || Number(entry.name) > 3000).length + Math.max(0, listing.length - 3000);
        const stat = await sandbox.files.stat("real.txt").catch(() => undefined);
        if (stat) statSizes.add(stat.size);
        const text = await sandbox.files.read("real.txt").catch(() => undefined);
        if (text !== undefined) reads.add(text);
      }
      await sandbox.files.write("stop-injecting", "");
      await injector.wait();
      const opened = Number(await sandbox.files.read("injector-opened"));
      console.log(
        `channel: injector opened ${opened} helper stdouts; ${invented} invented entries over ${rounds} listings; stat sizes ${[...statSizes].join(",")}; reads ${JSON.stringify([...reads])}`,
      );
      expect(opened).toBe(0);
      expect(invented).toBe(0);
      expect([...statSizes]).toEqual([5]);
      expect([...reads]).toEqual(["hello"]);
      expect((await sandbox.files.list("many")).length).toBe(3000);
    },
  );

  it(
    "names that are not UTF-8 round-trip: `sec\\xff` and a decoy named with U+FFFD are two entries, and each operation acts on its own file",
    { timeout: 120_000 },
    async () => {
      await using sandbox = await fresh();
      const made = await sandbox.commands.run(
        `python3 -c "import os; os.makedirs('/workspace/names'); open(b'/workspace/names/sec\\xff', 'w').write('real'); open('/workspace/names/sec\\ufffd', 'w').write('decoy')"`,
      );
      expect(made.exitCode, made.stderr).toBe(0);
      const names = (await sandbox.files.list("names")).map((entry) => entry.name);
      console.log(`names: listed ${JSON.stringify(names)}`);
      expect(names).toEqual(["sec\udcff", "sec\ufffd"]);
      expect(await sandbox.files.read("names/sec\udcff")).toBe("real");
      expect((await sandbox.files.stat("names/sec\udcff")).size).toBe(4);
      expect(await sandbox.files.read("names/sec\ufffd")).toBe("decoy");
      await sandbox.files.remove("names/sec\udcff");
      const left = await sandbox.commands.run("ls /workspace/names | od -An -c | tr -s ' '");
      expect(left.stdout).not.toContain("377");
      expect(await sandbox.files.read("names/sec\ufffd")).toBe("decoy");
      await sandbox.files.write("names/new\udcfe", "written");
      const written = await sandbox.commands.run("cat /workspace/names/new$(printf '\\376')");
      expect(written.stdout).toBe("written");
    },
  );

  it("reading a path flipped between a file and a link to /etc/passwd never returns /etc/passwd", { timeout: 600_000 }, async () => {
    await using sandbox = await fresh();
    const flipper = await sandbox.commands.start(
      "cd /workspace && while [ ! -e stop-flipping ]; do echo inside > flip.f && mv -T flip.f flip; ln -sfn /etc/passwd flip.l && mv -T flip.l flip; done",
    );
    const reads = FLIP_ROUNDS;
    let escaped = 0;
    let inside = 0;
    let refused = 0;
    for (let index = 0; index < reads; index++) {
      const text = await sandbox.files.read("flip").catch(() => undefined);
      if (text === undefined) refused++;
      else if (text.includes("root:")) escaped++;
      else if (text === "inside\n") inside++;
    }
    await sandbox.files.write("stop-flipping", "");
    await flipper.wait();
    console.log(`read race: ${reads} reads, ${escaped} returned /etc/passwd, ${inside} the workspace file, ${refused} refused`);
    expect(escaped).toBe(0);
    expect(inside).toBeGreaterThan(0);
  });

  it(
    "writing through a parent flipped between a folder and a link to /tmp never lands a file outside the workspace",
    { timeout: 600_000 },
    async () => {
      await using sandbox = await fresh();
      await sandbox.commands.run("mkdir -p /tmp/outside");
      const flipper = await sandbox.commands.start(
        "cd /workspace && while [ ! -e stop-flipping ]; do rm -rf parent; mkdir parent; rm -rf parent; ln -s /tmp/outside parent; done",
      );
      const writes = FLIP_ROUNDS;
      for (let index = 0; index < writes; index++) await sandbox.files.write(`parent/file-${index}.txt`, "x").catch(() => undefined);
      await sandbox.files.write("stop-flipping", "");
      await flipper.wait();
      const outside = await sandbox.commands.run("ls /tmp/outside | wc -l");
      console.log(`write race: ${writes} writes, ${outside.stdout.trim()} landed in /tmp/outside`);
      expect(outside.stdout.trim()).toBe("0");
    },
  );
});

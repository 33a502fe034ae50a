import { expect } from "vitest";
import type { ContractHarness } from "../harness.js";

/** Host-side file operations per race test: the old check-then-use scripts lost about 1 in 7 on Docker (28 of 200), so 40 hit it several times; bounded so Modal (about 1.8 s per call under load) stays inside its 120 s test timeout. */
const RACE_ROUNDS = 40;

/** A shell loop bounded by a stop file and an iteration cap, so a lost stop never leaves it running forever. */
const boundedLoop = (body: string) => `i=0; while [ ! -e stop-flipping ] && [ $i -lt 100000 ]; do ${body}; i=$((i+1)); done; exit 0`;

/**
 * Names, races and bytes (issue 19, ADR 0031), the same on every backend: names that are hard to carry (newline, tab,
 * backslash, quotes, a leading `-`, 255 bytes, bytes that are not UTF-8) round-trip and stay distinct; a path flipped
 * between a file (or folder) and a link out of the workspace while the host uses it never lets a read or a write
 * cross the workspace's edge. The flipping runs inside the sandbox, as an attacker's code would.
 */
export function registerFileRaceTests(harness: ContractHarness): void {
  const { contractTest } = harness;

  contractTest(
    "file-races.hard-names",
    "names with a newline, tab, backslash, quotes, a leading '-' and 255 bytes round-trip through write, list, stat, read and remove",
    async () => {
      await using sandbox = await harness.createSandbox();
      const names = [
        "new\nline",
        "tab\there",
        "back\\slash",
        'quote"double',
        "quote'single",
        "-leading-dash",
        "x".repeat(255),
        "spaces  and ünïcode",
      ];
      await sandbox.files.mkdir("hard");
      for (const name of names) await sandbox.files.write(`hard/${name}`, `content of ${name.length}`);
      const listed = (await sandbox.files.list("hard")).map((entry) => entry.name);
      expect(listed).toEqual([...names].sort((left, right) => (left < right ? -1 : left > right ? 1 : 0)));
      for (const name of names) {
        expect(await sandbox.files.read(`hard/${name}`)).toBe(`content of ${name.length}`);
        expect((await sandbox.files.stat(`hard/${name}`)).name).toBe(name);
        await sandbox.files.remove(`hard/${name}`);
      }
      expect(await sandbox.files.list("hard")).toEqual([]);
    },
  );

  contractTest(
    "file-races.non-utf8-names",
    "a name that is not UTF-8 and a decoy whose name decodes to the same replacement character are two entries; each operation acts on its own file or is refused",
    async () => {
      await using sandbox = await harness.createSandbox();
      const made = await sandbox.commands.run(
        "mkdir -p names && printf real > \"names/sec$(printf '\\377')\" && printf decoy > \"names/sec$(printf '\\357\\277\\275')\"",
      );
      expect(made.exitCode, made.stderr).toBe(0);
      const names = (await sandbox.files.list("names")).map((entry) => entry.name);
      expect(new Set(names).size).toBe(2);
      expect(names).toContain("sec\ufffd");
      const real = names.find((name) => name !== "sec\ufffd")!;
      const outcome = async <T>(work: () => Promise<T>) =>
        work().then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
      const read = await outcome(() => sandbox.files.read(`names/${real}`));
      if ("value" in read) expect(read.value).toBe("real");
      else expect(read.error).toMatchObject({ code: "SBX_PATH" });
      const removed = await outcome(() => sandbox.files.remove(`names/${real}`));
      const left = await sandbox.commands.run("ls names | od -An -tx1 | tr -d ' \\n'");
      if ("value" in removed) expect(left.stdout).not.toContain("ff");
      else expect(removed.error).toMatchObject({ code: "SBX_PATH" });
      expect(await sandbox.files.read("names/sec\ufffd")).toBe("decoy");
    },
  );

  contractTest(
    "file-races.read-flip",
    "reading a path flipped between a file and a link out of the workspace never returns the outside file",
    async () => {
      await using sandbox = await harness.createSandbox();
      const outside = `/tmp/sbx-race-${Math.random().toString(36).slice(2)}`;
      expect((await sandbox.commands.run(`mkdir -p ${outside} && printf outside-secret > ${outside}/secret`)).exitCode).toBe(0);
      const flipping = sandbox.commands.run(boundedLoop(`rm -f flip; printf inside > flip; rm -f flip; ln -s ${outside}/secret flip`), {
        timeoutMs: 240_000,
      });
      let escaped = 0;
      let inside = 0;
      try {
        for (let round = 0; round < RACE_ROUNDS; round++) {
          const text = await sandbox.files.read("flip").catch(() => undefined);
          if (text === "outside-secret") escaped++;
          if (text === "inside") inside++;
        }
      } finally {
        await sandbox.files.write("stop-flipping", "");
        await flipping;
      }
      expect(escaped, `${escaped} of ${RACE_ROUNDS} reads returned the file outside the workspace (${inside} the file inside)`).toBe(0);
    },
  );

  contractTest(
    "file-races.write-flip",
    "writing through a parent flipped between a folder and a link out of the workspace never lands a file outside",
    async () => {
      await using sandbox = await harness.createSandbox();
      const outside = `/tmp/sbx-race-${Math.random().toString(36).slice(2)}`;
      expect((await sandbox.commands.run(`mkdir -p ${outside}`)).exitCode).toBe(0);
      const flipping = sandbox.commands.run(boundedLoop(`rm -rf parent; mkdir parent; rm -rf parent; ln -s ${outside} parent`), {
        timeoutMs: 240_000,
      });
      try {
        for (let round = 0; round < RACE_ROUNDS; round++) await sandbox.files.write(`parent/file-${round}.txt`, "x").catch(() => undefined);
      } finally {
        await sandbox.files.write("stop-flipping", "");
        await flipping;
      }
      const landed = await sandbox.commands.run(`ls ${outside} | wc -l`);
      expect(landed.stdout.trim(), `files written outside the workspace (${outside})`).toBe("0");
    },
  );
}

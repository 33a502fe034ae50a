import { caught } from "./support/caught.ts";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, FileNotFoundError, InvalidArgumentError, PathError, type Sandbox } from "../src/index.ts";
import { createMemoryProvider, MEMORY_WORKSPACE, type MemoryDriver } from "./support/memory-driver.ts";

let hostDirectory: string;
let sandbox: Sandbox;
let driver: MemoryDriver;

beforeAll(async () => {
  hostDirectory = await mkdtemp(join(tmpdir(), "sbx-core-files-"));
  const provider = createMemoryProvider();
  sandbox = await createSandbox(provider);
  driver = provider.drivers[0]!;
});

afterAll(async () => {
  await sandbox.kill();
  await rm(hostDirectory, { recursive: true, force: true });
});

const pathOperations: Array<[string, (path: string) => Promise<unknown>]> = [
  ["files.write", (path) => sandbox.files.write(path, "x")],
  ["files.read", (path) => sandbox.files.read(path)],
  ["files.list", (path) => sandbox.files.list(path)],
  ["files.stat", (path) => sandbox.files.stat(path)],
  ["files.exists", (path) => sandbox.files.exists(path)],
  ["files.remove", (path) => sandbox.files.remove(path)],
  ["files.mkdir", (path) => sandbox.files.mkdir(path)],
  ["files.rename (from)", (path) => sandbox.files.rename(path, "ok.txt")],
  ["files.rename (to)", (path) => sandbox.files.rename("ok.txt", path)],
  ["files.upload (sandbox path)", (path) => sandbox.files.upload("/etc/hostname", path)],
  ["files.download (sandbox path)", (path) => sandbox.files.download(path, join(hostDirectory, "never"))],
];

describe("every files.* operation confines paths to the workspace before calling the backend", () => {
  it.each(pathOperations)("%s with a path escaping the workspace → PathError escapes-workspace", async (_name, operation) => {
    for (const path of ["../x", "a/../../x", "/etc/passwd", `${MEMORY_WORKSPACE}/../etc`]) {
      const error = await caught(() => operation(path));
      expect(error).toBeInstanceOf(PathError);
      expect(error.code).toBe("SBX_PATH");
      expect(error.reason).toBe("escapes-workspace");
      expect(error.path).toBe(path);
    }
    expect(driver.files.size).toBe(0);
  });

  it.each(pathOperations)(
    "%s with an invalid path (empty, NUL) → PathError invalid; not a string → InvalidArgumentError on path",
    async (_name, operation) => {
      for (const path of ["", "a\0b"]) {
        const error = await caught(() => operation(path as string));
        expect(error).toBeInstanceOf(PathError);
        expect(error.reason).toBe("invalid");
      }
      for (const path of [42, undefined]) {
        const error = await caught(() => operation(path as unknown as string));
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect(error.field).toBe("path");
      }
    },
  );
});

describe("files.* argument checks", () => {
  it.each([[42], [null], [{ text: "x" }], [[1, 2]]])("write with data %j → InvalidArgumentError field data", async (data) => {
    const error = await caught(() => sandbox.files.write("bad.txt", data as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("data");
  });

  it("read with an unknown format → InvalidArgumentError options.format", async () => {
    await sandbox.files.write("fmt.txt", "x");
    const error = await caught(() => sandbox.files.read("fmt.txt", { format: "json" } as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("options.format");
  });

  it.each([["."], [MEMORY_WORKSPACE], [`${MEMORY_WORKSPACE}/`], ["./"]])("remove(%j), the workspace itself → InvalidArgumentError", async (path) => {
    const error = await caught(() => sandbox.files.remove(path));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("path");
    expect(driver.directories.has(MEMORY_WORKSPACE)).toBe(true);
  });

  it.each([[""], [42]])("upload with host path %j → InvalidArgumentError hostPath", async (hostPath) => {
    const error = await caught(() => sandbox.files.upload(hostPath as string, "u.txt"));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("hostPath");
  });

  it("upload of a missing host file or a host directory → InvalidArgumentError hostPath", async () => {
    expect((await caught(() => sandbox.files.upload(join(hostDirectory, "missing"), "u.txt"))).field).toBe("hostPath");
    expect((await caught(() => sandbox.files.upload(hostDirectory, "u.txt"))).field).toBe("hostPath");
  });

  it.each([[""], [null]])("download with host path %j → InvalidArgumentError hostPath", async (hostPath) => {
    const error = await caught(() => sandbox.files.download("a.txt", hostPath as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.field).toBe("hostPath");
  });

  it("a missing file → FileNotFoundError from read/stat/remove, and exists() is false", async () => {
    for (const operation of [
      () => sandbox.files.read("missing.txt"),
      () => sandbox.files.stat("missing.txt"),
      () => sandbox.files.remove("missing.txt"),
    ]) {
      const error = await caught(operation);
      expect(error).toBeInstanceOf(FileNotFoundError);
      expect(error.code).toBe("SBX_FILE_NOT_FOUND");
    }
    expect(await sandbox.files.exists("missing.txt")).toBe(false);
  });

  it("downloading a missing file leaves no host file behind", async () => {
    const hostPath = join(hostDirectory, "not-created");
    expect(await caught(() => sandbox.files.download("missing.txt", hostPath))).toBeInstanceOf(FileNotFoundError);
    await expect(readFile(hostPath)).rejects.toThrow();
  });
});

describe("files.* pass normalised absolute paths and data through", () => {
  it("the driver receives the normalised absolute path", async () => {
    await sandbox.files.write("./a//b/./c.txt", "x");
    expect(driver.files.has(`${MEMORY_WORKSPACE}/a/b/c.txt`)).toBe(true);
    await sandbox.files.write(`${MEMORY_WORKSPACE}/abs.txt`, "y");
    expect(driver.files.has(`${MEMORY_WORKSPACE}/abs.txt`)).toBe(true);
  });

  it("text, bytes, ReadableStream and async iterable round-trip; read as text, bytes or stream", async () => {
    await sandbox.files.write("text.txt", "héllo");
    expect(await sandbox.files.read("text.txt")).toBe("héllo");
    await sandbox.files.write("bytes.bin", new Uint8Array([0, 255, 1]));
    expect(await sandbox.files.read("bytes.bin", { format: "bytes" })).toEqual(new Uint8Array([0, 255, 1]));
    await sandbox.files.write(
      "stream.txt",
      new ReadableStream({ start: (controller) => (controller.enqueue(new TextEncoder().encode("streamed")), controller.close()) }),
    );
    expect(await sandbox.files.read("stream.txt")).toBe("streamed");
    await sandbox.files.write(
      "iter.txt",
      (async function* () {
        yield new TextEncoder().encode("it");
        yield new TextEncoder().encode("er");
      })(),
    );
    const stream = await sandbox.files.read("iter.txt", { format: "stream" });
    expect(await new Response(stream).text()).toBe("iter");
    await sandbox.files.write("empty.txt", "");
    expect(await sandbox.files.read("empty.txt")).toBe("");
  });

  it("upload and download stream between host and sandbox", async () => {
    const source = join(hostDirectory, "up.txt");
    await writeFile(source, "host data");
    await sandbox.files.upload(source, "up.txt");
    expect(await sandbox.files.read("up.txt")).toBe("host data");
    const destination = join(hostDirectory, "down.txt");
    await sandbox.files.download("up.txt", destination);
    expect(await readFile(destination, "utf8")).toBe("host data");
  });

  it("rename, mkdir, list and stat work inside the workspace", async () => {
    await sandbox.files.write("old.txt", "x");
    await sandbox.files.rename("old.txt", "new.txt");
    expect(await sandbox.files.exists("old.txt")).toBe(false);
    expect((await sandbox.files.stat("new.txt")).size).toBe(1);
    await sandbox.files.mkdir("folder");
    const names = (await sandbox.files.list(".")).map((entry) => entry.name);
    expect(names).toEqual(expect.arrayContaining(["new.txt", "folder"]));
  });
});

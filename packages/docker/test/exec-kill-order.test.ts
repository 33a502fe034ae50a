/**
 * The kill of a command's exec against the engine's order of events: the engine answers an exec start's attach before
 * it starts the process, so a kill sent at once could scan a container where the command does not exist yet, call it
 * verified, and leave the command to start and run (a CI run's `first.kill()` left `sleep 600` running). The engine
 * here is a scripted stand-in for one exec, so the order is the test's, not the scheduler's.
 */
import { PassThrough } from "node:stream";
import type Docker from "dockerode";
import { describe, expect, it } from "vitest";
import { spawnCommand, type ExecContext } from "../src/exec-process.js";

/** What the stand-in engine reports for the exec: not started, running, or exited with a code. */
type ExecState = "not-started" | "running" | { readonly exitCode: number };

function standInEngine(initial: ExecState) {
  const engine = { state: initial, inspects: 0, kills: [] as Array<{ stateBefore: ExecState; inspectsBefore: number }> };
  const stream = new PassThrough();
  const exec = {
    id: "exec-1",
    inspect: async () => {
      engine.inspects++;
      const state = engine.state;
      if (state === "not-started") return { Running: false, ExitCode: null, Pid: 0 };
      if (state === "running") return { Running: true, ExitCode: null, Pid: 4242 };
      return { Running: false, ExitCode: state.exitCode, Pid: 4242 };
    },
    start: async () => stream,
  } as unknown as Docker.Exec;
  const container = { exec: async () => exec } as unknown as Docker.Container;
  return { engine, stream, container };
}

function contextFor(container: Docker.Container, onKill: () => void): ExecContext {
  return {
    container,
    user: "10001:10001",
    checkOutOfMemory: async () => false,
    killVerified: async () => onKill(),
    lostError: async () => undefined,
    liveExecs: new Set(),
  };
}

const request = { command: "sleep 600", cwd: "/workspace", env: {}, stdin: false, onStdout: () => {}, onStderr: () => {} };

describe("the kill of a command's exec", () => {
  it("waits for the engine to start the process before the verified kill, and the exit is not taken from the not-started exec", async () => {
    const { engine, stream, container } = standInEngine("not-started");
    const spawned = await spawnCommand(
      contextFor(container, () => {
        engine.kills.push({ stateBefore: engine.state, inspectsBefore: engine.inspects });
        if (engine.state === "running") {
          engine.state = { exitCode: 137 };
          stream.end();
        }
      }),
      request,
    );
    const killing = spawned.kill();
    // The engine starts the process only now, after the kill was asked for.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(engine.kills, "no kill while the process does not exist yet").toEqual([]);
    engine.state = "running";
    await killing;
    expect(engine.kills.map((kill) => kill.stateBefore)).toEqual(["running"]);
    expect(await spawned.exit).toMatchObject({ exitCode: 137 });
  });

  it("kills again while the engine still reports the exec running after a verified kill (its process started after the scan)", async () => {
    const { engine, stream, container } = standInEngine("running");
    const spawned = await spawnCommand(
      contextFor(container, () => {
        engine.kills.push({ stateBefore: engine.state, inspectsBefore: engine.inspects });
        // The first scan found nothing (the process was not there yet); the second one kills it.
        if (engine.kills.length === 2) {
          engine.state = { exitCode: 137 };
          stream.end();
        }
      }),
      request,
    );
    await spawned.kill();
    expect(engine.kills).toHaveLength(2);
    expect(await spawned.exit).toMatchObject({ exitCode: 137 });
  });

  it("an exec the engine reports running after every kill is an error, never a kill reported done", { timeout: 30_000 }, async () => {
    const { engine, container } = standInEngine("running");
    const spawned = await spawnCommand(
      contextFor(container, () => engine.kills.push({ stateBefore: engine.state, inspectsBefore: engine.inspects })),
      request,
    );
    const error = await spawned.kill().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "SBX_PROVIDER", retryable: false });
    expect((error as Error).message).toMatch(/still reports the command's exec running after 4 verified kills/);
    expect(engine.kills).toHaveLength(4);
  });
});

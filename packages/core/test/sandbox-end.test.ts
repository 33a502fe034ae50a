import { afterEach, describe, expect, it, vi } from "vitest";
import { LOSS_CHECK_INTERVAL_MS, SandboxEndWatch } from "../src/sandbox/sandbox-end.ts";
import type { ProbeAnswer } from "../src/adapter.ts";

/** A watch with recorded callbacks; `answers` are what successive probes return (the last one repeats). */
function watchWith(options: { lifetimeMs?: number; answers?: ProbeAnswer[]; busy?: () => boolean }) {
  const calls: string[] = [];
  const answers = options.answers;
  let probes = 0;
  const watch = new SandboxEndWatch({
    probe: answers
      ? async () => {
          probes += 1;
          return answers[Math.min(probes, answers.length) - 1]!;
        }
      : undefined,
    lifetimeEndsAt: options.lifetimeMs === undefined ? undefined : Date.now() + options.lifetimeMs,
    onLifetimeEnd: () => calls.push("lifetime"),
    onFoundGone: () => calls.push("gone"),
    busy: options.busy ?? (() => false),
  });
  return { watch, calls, probes: () => probes };
}

describe("SandboxEndWatch: the first end wins and is announced once (ADR 0045)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("the lifetime timer ends the sandbox at the lifetime, with reason lifetime, and marks it gone once", async () => {
    vi.useFakeTimers();
    const { watch, calls } = watchWith({ lifetimeMs: 5_000 });
    await vi.advanceTimersByTimeAsync(4_999);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual(["lifetime"]);
    expect((await watch.ended).reason).toBe("lifetime");
    watch.end("killed");
    expect((await watch.ended).reason, "a later end does not replace the first").toBe("lifetime");
  });

  it("a probe that answers gone ends it with reason lost; running and unknown answers prove nothing", async () => {
    vi.useFakeTimers();
    const { watch, calls, probes } = watchWith({ answers: ["running", "unknown", "gone"] });
    await vi.advanceTimersByTimeAsync(LOSS_CHECK_INTERVAL_MS * 2);
    expect(probes()).toBe(2);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(LOSS_CHECK_INTERVAL_MS);
    expect(calls).toEqual(["gone"]);
    expect((await watch.ended).reason).toBe("lost");
    await vi.advanceTimersByTimeAsync(LOSS_CHECK_INTERVAL_MS * 3);
    expect(probes(), "no probe after the end").toBe(3);
  });

  it("does not probe while a kill is in progress, and a kill ends it with reason killed and stops the timers", async () => {
    vi.useFakeTimers();
    let killing = true;
    const { watch, calls, probes } = watchWith({ answers: ["gone"], lifetimeMs: LOSS_CHECK_INTERVAL_MS * 5, busy: () => killing });
    await vi.advanceTimersByTimeAsync(LOSS_CHECK_INTERVAL_MS * 2);
    expect(probes()).toBe(0);
    killing = false;
    watch.end("killed");
    await vi.advanceTimersByTimeAsync(LOSS_CHECK_INTERVAL_MS * 10);
    expect(probes()).toBe(0);
    expect(calls).toEqual([]);
    expect((await watch.ended).reason).toBe("killed");
  });

  it("stays pending without a lifetime, a probe or a kill", async () => {
    vi.useFakeTimers();
    const { watch } = watchWith({});
    await vi.advanceTimersByTimeAsync(LOSS_CHECK_INTERVAL_MS * 10);
    const state = await Promise.race([watch.ended.then(() => "ended"), Promise.resolve("pending")]);
    expect(state).toBe("pending");
  });
});

import { describe, expect, it } from "vitest";
import { commandExitOutcome, LOST_SANDBOX_CHECKS, ResultCollector, type CommandExitFacts } from "../src/adapter.ts";
import { caught } from "./support/caught.ts";

/** Facts for one exit, recording how often the OOM counter and the lost check were asked. */
function facts(
  exitCode: number,
  answers: { counterGrew?: boolean | null; lostOnCheck?: number; killRequested?: boolean; lostCheckFails?: boolean } = {},
) {
  const asked = { counter: 0, lost: 0 };
  const gone = new Error("the sandbox is gone");
  const value: CommandExitFacts = {
    exitCode,
    killRequested: () => answers.killRequested ?? false,
    outOfMemoryCounterGrew: async () => {
      asked.counter++;
      return answers.counterGrew === undefined ? false : answers.counterGrew;
    },
    lostError: async () => {
      asked.lost++;
      if (answers.lostCheckFails) throw new Error("the engine did not answer");
      return answers.lostOnCheck !== undefined && asked.lost >= answers.lostOnCheck ? gone : undefined;
    },
  };
  return { value, asked, gone };
}

describe("commandExitOutcome: the one exit-137 → out-of-memory → lost rule", () => {
  it("any exit but a SIGKILL is a result the OOM killer did not cause, and asks nothing", async () => {
    for (const exitCode of [0, 1, 2, 130, 143]) {
      const { value, asked } = facts(exitCode);
      expect(await commandExitOutcome(value)).toEqual({ exitCode, outOfMemoryKilled: false });
      expect(asked).toEqual({ counter: 0, lost: 0 });
    }
  });

  it("a SIGKILL sbx asked for is sbx's own: a result, no lost check", async () => {
    const { value, asked } = facts(137, { killRequested: true });
    expect(await commandExitOutcome(value)).toEqual({ exitCode: 137, outOfMemoryKilled: false });
    expect(asked).toEqual({ counter: 1, lost: 0 });
  });

  it("a SIGKILL with a grown OOM counter is a result whose OOM report is unknown, never true (adr/0030)", async () => {
    const { value, asked } = facts(137, { counterGrew: true });
    expect(await commandExitOutcome(value)).toEqual({ exitCode: 137, outOfMemoryKilled: null });
    expect(asked).toEqual({ counter: 1, lost: 0 });
  });

  it("an unexplained SIGKILL in a sandbox that turns out gone rejects with the lost error, even when the backend notices late", async () => {
    const { value, asked, gone } = facts(137, { lostOnCheck: 3 });
    expect(await caught(() => commandExitOutcome(value))).toBe(gone);
    expect(asked.lost).toBe(3);
  });

  it("an unexplained SIGKILL in a live sandbox is a result after the bounded checks; an unreadable counter is unknown", async () => {
    const live = facts(137);
    expect(await commandExitOutcome(live.value)).toEqual({ exitCode: 137, outOfMemoryKilled: false });
    expect(live.asked.lost).toBe(LOST_SANDBOX_CHECKS.attempts);
    const unreadable = facts(137, { counterGrew: null });
    expect(await commandExitOutcome(unreadable.value)).toEqual({ exitCode: 137, outOfMemoryKilled: null });
  });

  it("a lost check that fails rejects: a result that might be false is never reported", async () => {
    const { value } = facts(137, { lostCheckFails: true });
    expect(((await caught(() => commandExitOutcome(value))) as Error).message).toBe("the engine did not answer");
  });
});

describe("ResultCollector: the one rule capping rich results", () => {
  const result = (text: string) => ({ isMainResult: false, data: { "text/plain": text } });

  it("keeps results in order up to the count and drops and counts the rest", () => {
    const collector = new ResultCollector({ maxResults: 2, limitBytes: 1000 });
    for (const text of ["a", "b", "c", "d"]) collector.push(result(text));
    expect(collector.results.map((kept) => kept.data["text/plain"])).toEqual(["a", "b"]);
    expect(collector.dropped).toBe(2);
  });

  it("stops at the first result over the byte cap: later small ones are dropped too, never a gap", () => {
    const collector = new ResultCollector({ maxResults: 10, limitBytes: 4 });
    for (const text of ["ab", "cde", "f"]) collector.push(result(text));
    expect(collector.results.map((kept) => kept.data["text/plain"])).toEqual(["ab"]);
    expect(collector.dropped).toBe(2);
  });
});

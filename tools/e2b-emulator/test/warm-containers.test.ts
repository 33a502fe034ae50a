import { WarmContainerPool } from "@sbx/emulator-kit";
import { describe, expect, it } from "vitest";

describe("WarmContainerPool", () => {
  it("gives nothing on the first take of a key, then the container prepared for it, each container once", async () => {
    let made = 0;
    const discarded: number[] = [];
    const pool = new WarmContainerPool<number>({ maxAgeMs: 60_000, discard: async (prepared) => void discarded.push(prepared) });
    const prepare = async () => ++made;
    expect(await pool.take("shape", prepare)).toBeUndefined();
    expect(await pool.take("shape", prepare)).toBe(1);
    expect(await pool.take("shape", prepare)).toBe(2);
    expect(await pool.take("other", prepare)).toBeUndefined();
    await pool.close();
    expect(discarded.sort()).toEqual([3, 4]);
    expect(await pool.take("shape", prepare)).toBeUndefined();
    expect(made).toBe(4);
  });

  it("discards a container older than maxAgeMs and one whose preparation failed, instead of giving it", async () => {
    const discarded: string[] = [];
    const pool = new WarmContainerPool<string>({ maxAgeMs: 0, discard: async (prepared) => void discarded.push(prepared) });
    await pool.take("shape", async () => "first");
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await pool.take("shape", async () => "second")).toBeUndefined();
    expect(discarded).toEqual(["first"]);
    const failing = new WarmContainerPool<string>({ maxAgeMs: 60_000, discard: async () => undefined });
    await failing.take("shape", () => Promise.reject(new Error("engine refused")));
    expect(await failing.take("shape", async () => "next")).toBeUndefined();
    await pool.close();
    await failing.close();
  });
});

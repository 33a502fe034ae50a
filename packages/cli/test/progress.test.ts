import { describe, expect, it } from "vitest";
import { ProgressDisplay, PullProgressAggregator } from "../src/index.js";

function capture(terminal: boolean) {
  const written: string[] = [];
  const environment = {
    argv: [],
    stdout: { write: () => true },
    stderr: { write: (text: string) => written.push(text), isTTY: terminal },
    stdin: (async function* () {})(),
    env: {},
    cwd: "/",
  };
  return { environment, written };
}

describe("progress display", () => {
  it("sums Docker pull events over layers, counting finished layers as complete", () => {
    const aggregator = new PullProgressAggregator();
    expect(aggregator.add({ status: "Pulling fs layer", id: "a" })).toEqual({ current: 0, total: 0 });
    expect(aggregator.add({ status: "Downloading", id: "a", progressDetail: { current: 100, total: 400 } })).toEqual({ current: 100, total: 400 });
    expect(aggregator.add({ status: "Downloading", id: "b", progressDetail: { current: 50, total: 100 } })).toEqual({ current: 150, total: 500 });
    expect(aggregator.add({ status: "Download complete", id: "a" })).toEqual({ current: 450, total: 500 });
    expect(aggregator.add({ status: "Pull complete", id: "b" })).toEqual({ current: 500, total: 500 });
  });

  it("redraws one line in place on a terminal and ends it with a newline", () => {
    const { environment, written } = capture(true);
    const display = new ProgressDisplay(environment, { json: false, quiet: false, color: false, terminal: false }, "pull python:3.12");
    display.update(0, 1024 * 1024);
    display.finish("image ready");
    expect(written).toEqual([
      "\r\u001b[2Kpull python:3.12 [........................]   0% 0 B/1.0 MiB",
      "\r\u001b[2Kpull python:3.12 [########################] 100% image ready\n",
    ]);
  });

  it("prints plain lines at each quarter when not a terminal, and nothing with --quiet or --json", () => {
    const plain = capture(false);
    const display = new ProgressDisplay(plain.environment, { json: false, quiet: false, color: false, terminal: false }, "upload a.bin");
    for (let done = 0; done <= 100; done += 10) display.update(done, 100);
    display.finish("100 B to a.bin");
    expect(plain.written).toEqual([
      "sbx: upload a.bin: 0% (0 B of 100 B)\n",
      "sbx: upload a.bin: 30% (30 B of 100 B)\n",
      "sbx: upload a.bin: 50% (50 B of 100 B)\n",
      "sbx: upload a.bin: 80% (80 B of 100 B)\n",
      "sbx: upload a.bin: done, 100 B to a.bin\n",
    ]);
    for (const mode of [
      { json: true, quiet: false, color: false, terminal: false },
      { json: false, quiet: true, color: false, terminal: false },
    ]) {
      const silent = capture(true);
      const quiet = new ProgressDisplay(silent.environment, mode, "x");
      quiet.update(1, 2);
      quiet.finish("done");
      expect(silent.written).toEqual([]);
    }
  });
});

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** Core's sources: every `.ts` file under packages/core/src. */
const sourceRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../src");

/** Every relative specifier a file imports or re-exports, type-only ones included (they tie the files together just the same). */
const RELATIVE_SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^;]*?from\s*["'](\.{1,2}\/[^"']+)["']|import\s*\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The file a relative specifier names: `./x.js` is the source `./x.ts`. */
function targetOf(importer: string, specifier: string): string {
  return resolve(dirname(importer), specifier.replace(/\.js$/, ".ts"));
}

/** The import graph of core's sources, files named relative to `src/`. */
export function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const files = sourceFiles(sourceRoot);
  const known = new Set(files);
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const targets = new Set<string>();
    for (const match of text.matchAll(RELATIVE_SPECIFIER)) {
      const target = targetOf(file, (match[1] ?? match[2])!);
      if (known.has(target)) targets.add(relative(sourceRoot, target));
    }
    graph.set(relative(sourceRoot, file), [...targets].sort());
  }
  return graph;
}

/** Every cycle's strongly connected component (Tarjan), each as one cycle path through it (`a → b → … → a`). */
export function importCycles(graph: Map<string, string[]>): string[] {
  let counter = 0;
  const index = new Map<string, number>();
  const lowest = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    lowest.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        lowest.set(node, Math.min(lowest.get(node)!, lowest.get(next)!));
      } else if (onStack.has(next)) lowest.set(node, Math.min(lowest.get(node)!, index.get(next)!));
    }
    if (lowest.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (;;) {
      const member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    const selfLoop = (graph.get(node) ?? []).includes(node);
    if (component.length > 1 || selfLoop) components.push(component);
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((component) => cyclePath(graph, new Set(component)));
}

/** One closed path through a strongly connected component, by breadth-first search back to its first file. */
function cyclePath(graph: Map<string, string[]>, members: Set<string>): string {
  const start = [...members].sort()[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at = node; at !== start; at = previous.get(at)!) path.splice(1, 0, at);
        return [...path, start].join(" → ") + ` (${members.size} files in the loop: ${[...members].sort().join(", ")})`;
      }
      if (previous.has(next) || next === start) continue;
      previous.set(next, node);
      queue.push(next);
    }
  }
  return [...members].join(" → ");
}

describe("core's import graph (no file depends on itself through others)", () => {
  it("finds a planted cycle and names it", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    expect(importCycles(graph)).toEqual(["a.ts → b.ts → c.ts → a.ts (3 files in the loop: a.ts, b.ts, c.ts)"]);
  });

  it("reads core's sources (the graph is not empty and sees re-exports and type-only imports)", () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(40);
    expect(graph.get("index.ts")?.length).toBeGreaterThan(5);
  });

  it("has no import cycle in packages/core/src", () => {
    expect(importCycles(importGraph())).toEqual([]);
  });
});

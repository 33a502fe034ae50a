/**
 * packages/contract/README.md lists every contract test id (ADR 0035): its "Test ids" section has one line per group,
 * `- group: \`name\`, \`name\``, and this test compares that list with `CONTRACT_TEST_IDS` in both directions, so an id
 * added to (or removed from) either side without the other fails here.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONTRACT_TEST_IDS } from "../src/test-ids.ts";

/** The ids the README's "Test ids" section lists: `group.name` for each backticked name on a `- group:` line. */
function readmeTestIds(readme: string): string[] {
  const section = readme.split(/^## Test ids$/m)[1]?.split(/^## /m)[0] ?? "";
  const ids: string[] = [];
  let group: string | undefined;
  for (const line of section.split("\n")) {
    const groupLine = /^- ([a-z][a-z-]*): (.*)$/.exec(line);
    if (groupLine) group = groupLine[1];
    else if (!/^ {2}\S/.test(line)) group = undefined;
    if (!group) continue;
    const listed = groupLine ? groupLine[2]! : line;
    for (const match of listed.matchAll(/`([^`]+)`/g)) ids.push(`${group}.${match[1]}`);
  }
  return ids;
}

describe("the README's list of test ids", () => {
  const listed = readmeTestIds(readFileSync(new URL("../README.md", import.meta.url), "utf8"));

  it("the parser finds the list", () => {
    expect(listed.length).toBeGreaterThan(50);
    expect(listed).toContain("lifecycle.create");
  });

  it("every registered id is in the README", () => {
    expect(CONTRACT_TEST_IDS.filter((id) => !listed.includes(id))).toEqual([]);
  });

  it("every id in the README is registered, once", () => {
    const registered: readonly string[] = CONTRACT_TEST_IDS;
    expect(listed.filter((id) => !registered.includes(id))).toEqual([]);
    expect(listed.filter((id, index) => listed.indexOf(id) !== index)).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { jsonDepth, MAX_JSON_DEPTH, nestsDeeperThan, stringifyJson } from "../../src/util/deep-json.ts";

describe("JSON nested deeper than the stack", () => {
  it("writes what JSON.stringify writes", () => {
    const samples = [{}, [], "s\"\n", 3.5, null, true, [undefined, 1], { a: [1, "x", null, { b: undefined, c: { d: [] } }], "k\n": {} }];
    for (const sample of samples) expect(stringifyJson(sample)).toBe(JSON.stringify(sample));
  });

  it("writes and measures 100,000 levels without overflowing", () => {
    const depth = 100_000;
    const text = `${'{"a":'.repeat(depth)}[]${"}".repeat(depth)}`;
    expect(stringifyJson(JSON.parse(text))).toBe(text);
    expect(jsonDepth(text)).toBe(depth + 1);
  });

  it("does not count brackets inside strings", () => {
    expect(jsonDepth('{"a":"{[[\\"[","b":[{}]}')).toBe(3);
    expect(jsonDepth('"plain"')).toBe(0);
  });
});

describe("the one JSON depth limit", () => {
  it("counts levels on a parsed value as on its text", () => {
    const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    for (const depth of [1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1]) {
      expect(jsonDepth(nested(depth))).toBe(depth);
      expect(nestsDeeperThan(JSON.parse(nested(depth)), MAX_JSON_DEPTH)).toBe(depth > MAX_JSON_DEPTH);
    }
    expect(nestsDeeperThan(JSON.parse(nested(100_000)), MAX_JSON_DEPTH)).toBe(true);
  });

  it("counts a value's own levels only, not what its prototype carries (a YAML !!binary value is a Buffer)", () => {
    expect(nestsDeeperThan({ d: Buffer.from("bytes") }, 2)).toBe(false);
    expect(nestsDeeperThan({ d: Object.create({ inherited: { deeper: {} } }) }, 2)).toBe(false);
    expect(nestsDeeperThan({ d: { own: {} } }, 2)).toBe(true);
  });
});

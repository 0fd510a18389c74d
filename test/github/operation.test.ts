import { describe, expect, it } from "vitest";
import { cutCodePoints, hasNextPage, pageOf } from "../../src/github/operation.ts";

describe("GitHub list helpers", () => {
  it("cuts a body at 500 code points, not UTF-16 units or bytes, and marks the cut", () => {
    expect(cutCodePoints("😀".repeat(500))).toBe("😀".repeat(500));
    expect(cutCodePoints(`${"😀".repeat(500)}a`)).toBe(`${"😀".repeat(500)}...`);
    expect(cutCodePoints(null)).toBe("");
  });

  it("reads 30 a page from the first page unless asked otherwise", () => {
    expect(pageOf({})).toEqual({ per_page: 30, page: 1 });
    expect(pageOf({ per_page: 100, page: 4 })).toEqual({ per_page: 100, page: 4 });
  });

  it("reads a next page only from the Link header's rel=next", () => {
    expect(hasNextPage('<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"')).toBe(true);
    expect(hasNextPage('<https://api.github.com/x?page=1>; rel="prev", <https://api.github.com/x?page=1>; rel="first"')).toBe(false);
    expect(hasNextPage(undefined)).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { readCapped } from "../../src/util/read-capped.ts";

async function* chunks(...parts: string[]) {
  for (const part of parts) yield Buffer.from(part);
}

describe("readCapped", () => {
  it("keeps a body of exactly the cap whole, and cuts one byte more", async () => {
    expect(await readCapped(chunks("abc", "de"), 5)).toEqual({ body: Buffer.from("abcde"), capped: false });
    expect(await readCapped(chunks("abc", "de", "f"), 5)).toEqual({ body: Buffer.from("abcde"), capped: true });
    expect(await readCapped(chunks("abcdef"), 5)).toEqual({ body: Buffer.from("abcde"), capped: true });
  });

  it("stops reading a source that never ends", async () => {
    let produced = 0;
    async function* endless() {
      for (;;) {
        produced++;
        yield Buffer.alloc(1024);
      }
    }
    expect((await readCapped(endless(), 4096)).capped).toBe(true);
    expect(produced).toBeLessThanOrEqual(5);
  });
});

import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseResource } from "../../src/resources/validate.ts";

const agent = (soul: unknown) => parseResource({ apiVersion: "core.orka.ai/v1alpha1", kind: "Agent", metadata: { name: "a" }, spec: { soul } });
const digestOf = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

// An Agent's persona source, checked where every Agent is validated.
describe("Agent spec.soul", () => {
  it("takes inline text up to 8192 bytes, with or without its digest, and a ConfigMap key pinned by digest", () => {
    expect(agent({ inline: "Be warm and brief." }).spec).toEqual({ soul: { inline: "Be warm and brief." } });
    expect(agent({ inline: "é".repeat(4096), digest: digestOf("é".repeat(4096)) }).spec).toMatchObject({ soul: { inline: "é".repeat(4096) } });
    const pinned = { configMapRef: { name: "souls", key: "writer.md" }, digest: `sha256:${"a".repeat(64)}` };
    expect(agent(pinned).spec).toEqual({ soul: pinned });
  });

  it.each([
    [{ inline: "x".repeat(9 * 1024) }, "spec.soul.inline: is 9216 bytes; at most 8192 are allowed"],
    [{ inline: "é".repeat(4097) }, "spec.soul.inline: is 8194 bytes; at most 8192 are allowed"],
    [{ configMapRef: { name: "souls", key: "w" } }, "spec.soul.digest: is required with configMapRef: sha256:<64 hex> of the text"],
    [{ inline: "x", configMapRef: { name: "souls", key: "w" }, digest: `sha256:${"a".repeat(64)}` }, "spec.soul.inline: set exactly one of inline and configMapRef"],
    [{}, "spec.soul.inline: set exactly one of inline and configMapRef"],
    [{ inline: "  \n" }, "spec.soul.inline: must not be empty"],
    [{ inline: "a\0b" }, "spec.soul.inline: must be UTF-8 text without NUL characters"],
    [{ inline: "broken \ud800 surrogate" }, "spec.soul.inline: must be UTF-8 text without NUL characters"],
    [{ inline: "Be kind.", digest: digestOf("Be rude.") }, "spec.soul.digest: does not match the inline text"],
    [{ inline: "Be kind.", digest: "sha256:ABC" }, "spec.soul.digest: must be sha256: followed by 64 lowercase hex digits"],
  ])("refuses %j", (soul, message) => {
    expect(() => agent(soul)).toThrow(message);
  });
});

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { crdYaml } from "../../src/resources/crd.ts";
import { ORKA_KINDS } from "../../src/resources/kinds.ts";
import { modelCallTimeout } from "../../src/resources/provider.ts";

describe("CRDs in deploy/crds", () => {
  it.each(ORKA_KINDS.map((k) => [k.kind, k] as const))("%s matches its zod schema (run npm run gen:crds after a schema change)", (_name, kind) => {
    const file = readFileSync(resolve(import.meta.dirname, "../../deploy/crds", `${kind.plural}.yaml`), "utf8");
    expect(file).toBe(crdYaml(kind));
    const crd = parse(file);
    const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    expect(JSON.stringify(spec)).not.toMatch(/"additionalProperties":false|\$schema/);
    expect(crd.metadata.name).toBe(`${kind.plural}.core.orka.ai`);
  });

  it.each([
    ["providers", (spec: any) => spec.properties.timeout],
    ["agents", (spec: any) => spec.properties.model.properties.timeout],
  ])("%s take a model-call timeout exactly when the server does, zero refused", (plural, timeoutOf) => {
    const crd = parse(readFileSync(resolve(import.meta.dirname, "../../deploy/crds", `${plural}.yaml`), "utf8"));
    const schema = timeoutOf(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec);
    const patterns: string[] = [schema.pattern, ...(schema.allOf ?? []).map((part: { pattern?: string }) => part.pattern)].filter(Boolean);
    expect(patterns.length).toBeGreaterThan(0);
    const crdTakes = (text: string) => text.length <= schema.maxLength && patterns.every((pattern) => new RegExp(pattern, "u").test(text));
    for (const text of ["0", "0s", "0m0s", "0.0s", "00ms", "", "5 m", "x".repeat(65)]) expect([text, crdTakes(text), modelCallTimeout.safeParse(text).success]).toEqual([text, false, false]);
    for (const text of ["90s", "5m", "1h30m", "1.5s", "0.5s", "250ms", "0h10m"]) expect([text, crdTakes(text), modelCallTimeout.safeParse(text).success]).toEqual([text, true, true]);
  });

  it("refuses a long run of digits as a model-call timeout at once, before the pattern could backtrack over it", () => {
    const started = Date.now();
    expect(modelCallTimeout.safeParse(`${"1".repeat(30_000)}x`).success).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("carries the defaults the server fills in", () => {
    const tasks = parse(crdYaml(ORKA_KINDS.find((k) => k.kind === "Task")!));
    expect(tasks.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.priority).toMatchObject({ default: 500, minimum: 0, maximum: 1000 });
  });
});

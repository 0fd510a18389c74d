import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { crdYaml } from "../../src/resources/crd.ts";
import { ORKA_KINDS } from "../../src/resources/kinds.ts";

describe("CRDs in deploy/crds", () => {
  it.each(ORKA_KINDS.map((k) => [k.kind, k] as const))("%s matches its zod schema (run npm run gen:crds after a schema change)", (_name, kind) => {
    const file = readFileSync(resolve(import.meta.dirname, "../../deploy/crds", `${kind.plural}.yaml`), "utf8");
    expect(file).toBe(crdYaml(kind));
    const crd = parse(file);
    const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    expect(JSON.stringify(spec)).not.toMatch(/"additionalProperties":false|\$schema/);
    expect(crd.metadata.name).toBe(`${kind.plural}.core.orka.ai`);
  });

  it("carries the defaults the server fills in", () => {
    const tasks = parse(crdYaml(ORKA_KINDS.find((k) => k.kind === "Task")!));
    expect(tasks.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.priority).toMatchObject({ default: 500, minimum: 0, maximum: 1000 });
  });
});

// Writes deploy/crds/*.yaml from the zod schemas (npm run gen:crds). A test fails when they drift.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { crdYaml } from "../src/resources/crd.ts";
import { ORKA_KINDS } from "../src/resources/kinds.ts";

for (const kind of ORKA_KINDS) {
  const file = resolve(import.meta.dirname, "../deploy/crds", `${kind.plural}.yaml`);
  writeFileSync(file, crdYaml(kind));
  console.log(`wrote ${file}`);
}

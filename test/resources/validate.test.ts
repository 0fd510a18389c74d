import { describe, expect, it } from "vitest";
import { parseResource } from "../../src/resources/validate.ts";
import { parseYamlDocuments } from "../../src/resources/yaml.ts";

describe("resource validation", () => {
  it("fills defaults and names the wrong field", () => {
    const [task] = parseYamlDocuments("apiVersion: core.orka.ai/v1alpha1\nkind: Task\nmetadata: {name: t}\nspec: {type: ai, prompt: hi}\n");
    expect(parseResource(task)).toMatchObject({ metadata: { namespace: "default" }, spec: { priority: 500 } });
    expect(() => parseResource({ apiVersion: "core.orka.ai/v1alpha1", kind: "Agent", metadata: { name: "a" }, spec: { coordination: { enabled: true, maxDepth: 11 } } })).toThrow(
      "spec.coordination.maxDepth: Too big: expected number to be <=10",
    );
    expect(() => parseResource({ apiVersion: "core.orka.ai/v1alpha1", kind: "Widget", metadata: { name: "a" } })).toThrow('kind: unknown kind "Widget"');
    expect(() => parseResource({ apiVersion: "core.orka.ai/v1alpha1", kind: "Agent", metadata: { name: "a" }, spec: { runtime: { type: "claude" }, providerRef: { name: "p" } } })).toThrow(
      "spec.runtime: providerRef and runtime cannot be set together",
    );
  });

  it("names every unknown field, at every level, before any other complaint", () => {
    const task = { apiVersion: "core.orka.ai/v1alpha1", kind: "Task", metadata: { name: "t", lables: {} }, spec: { type: "ai", promt: "hi", ai: { modle: "m" } }, extra: 1 };
    expect(() => parseResource(task)).toThrow('unknown field "extra": remove it or correct the spelling');
    const { extra: _extra, ...inside } = task;
    expect(() => parseResource(inside)).toThrow('unknown field "metadata.lables": remove it or correct the spelling');
    // The missing prompt follows from the misspelt one, so the misspellings are what is reported.
    expect(() => parseResource({ ...inside, metadata: { name: "t" } })).toThrow('unknown fields "spec.ai.modle", "spec.promt": remove them or correct the spelling');
    expect(() => parseResource({ apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, stringData: { "any key": "v" }, immutable: true })).toThrow(
      'unknown field "immutable": remove it or correct the spelling',
    );
  });

  it("decodes Secret data and merges stringData", () => {
    const secret = parseResource({ apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, data: { a: Buffer.from("one").toString("base64") }, stringData: { b: "two" } });
    expect(secret.spec).toEqual({ type: "Opaque", data: { a: "one", b: "two" } });
    expect(() => parseResource({ apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, data: { a: "not base64!" } })).toThrow("data.a: must be base64");
  });

  it("reports a YAML syntax error with its document number", () => {
    expect(() => parseYamlDocuments("a: 1\n---\nb: [unclosed\n", "file.yaml")).toThrow(/^file.yaml: document 2:/);
  });
});

import { describe, expect, it } from "vitest";
import { isRequestRefusal, ModelApiError } from "../../src/providers/model.ts";
import { OrkaError } from "../../src/util/errors.ts";

// The compatible endpoints answer a refusal with its own status and message, and anything else as a failed completion.
describe("which errors refuse a compat request", () => {
  it("counts Orka's refusals, not a failed model call, not Orka's own internal faults, not a bare Error", () => {
    expect(isRequestRefusal(new OrkaError("not_found", "unknown model"))).toBe(true);
    expect(isRequestRefusal(new OrkaError("resource_exhausted", "too many running"))).toBe(true);
    expect(isRequestRefusal(new ModelApiError("provider returned HTTP 400: no such model", 400))).toBe(false);
    expect(isRequestRefusal(new OrkaError("internal", "unknown secret encoding"))).toBe(false);
    expect(isRequestRefusal(new Error("boom"))).toBe(false);
  });
});

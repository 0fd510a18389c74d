import { describe, expect, it } from "vitest";
import { serverConfigFrom } from "../src/config.ts";

describe("server configuration", () => {
  it("gives a model call 120 s by default, inside the 300 s after which Node's fetch would cut it", () => {
    expect(serverConfigFrom({}, "/home/someone").modelCalls).toEqual({ retryBaseMs: 1000, timeoutMs: 120_000 });
    expect(serverConfigFrom({ ORKA_MODEL_TIMEOUT_MS: "600000" }, "/home/someone").modelCalls.timeoutMs).toBe(600_000);
  });
});

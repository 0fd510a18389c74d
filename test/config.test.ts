import { describe, expect, it } from "vitest";
import { serverConfigFrom } from "../src/config.ts";

describe("server configuration", () => {
  it("gives a model call 120 s by default, inside the 300 s after which Node's fetch would cut it", () => {
    expect(serverConfigFrom({}, "/home/someone").modelCalls).toEqual({ retryBaseMs: 1000, timeoutMs: 120_000 });
    expect(serverConfigFrom({ ORKA_MODEL_TIMEOUT_MS: "600000" }, "/home/someone").modelCalls.timeoutMs).toBe(600_000);
  });

  it("allows workspace repositories on github.com only, unless the operator lists other git hosts", () => {
    expect(serverConfigFrom({}, "/home/someone").git).toMatchObject({ allowedHosts: ["github.com"], configFile: undefined });
    const git = serverConfigFrom({ ORKA_GIT_HOSTS: "github.com, Git.Example.COM ,", ORKA_GIT_CONFIG: "/etc/orka/gitconfig" }, "/home/someone").git;
    expect(git).toMatchObject({ allowedHosts: ["github.com", "git.example.com"], configFile: "/etc/orka/gitconfig" });
  });
});

import { describe, expect, it } from "vitest";
import { serverConfigFrom } from "../src/config.ts";

describe("server configuration", () => {
  it("gives a model call 120 s by default, inside the 300 s after which Node's fetch would cut it", () => {
    expect(serverConfigFrom({}, "/home/someone").modelCalls).toEqual({ retryBaseMs: 1000, timeoutMs: 120_000 });
    expect(serverConfigFrom({ ORKA_MODEL_TIMEOUT_MS: "600000" }, "/home/someone").modelCalls.timeoutMs).toBe(600_000);
  });

  it("reads the GitHub settings: API base URL, the operator's GITHUB_TOKEN and the review-marker keys", () => {
    expect(serverConfigFrom({}, "/home/someone").github).toEqual({
      apiBaseUrl: "https://api.github.com", webHosts: ["github.com"], fallbackToken: undefined, retryBaseMs: 1000,
      marker: { secret: "", previousSecrets: [], trustedAuthor: undefined },
    });
    const github = serverConfigFrom({
      ORKA_GITHUB_API_BASE_URL: "https://ghe.example.com/api/v3/", GITHUB_TOKEN: " ghp_operator \n", ORKA_PR_REVIEW_MARKER_SECRET: " k2 ",
      ORKA_PR_REVIEW_MARKER_PREVIOUS_SECRETS: "k1, ,k0", ORKA_PR_REVIEW_MARKER_TRUSTED_AUTHOR: "orka-bot",
    }, "/home/someone").github;
    expect(github).toEqual({
      apiBaseUrl: "https://ghe.example.com/api/v3", webHosts: ["github.com", "ghe.example.com"], fallbackToken: "ghp_operator", retryBaseMs: 1000,
      marker: { secret: "k2", previousSecrets: ["k1", "k0"], trustedAuthor: "orka-bot" },
    });
    expect(() => serverConfigFrom({ ORKA_GITHUB_API_BASE_URL: "ftp://ghe.example.com" }, "/home/someone")).toThrow("ORKA_GITHUB_API_BASE_URL must be an http(s) URL");
  });

  it("allows workspace repositories on github.com only, unless the operator lists other git hosts", () => {
    expect(serverConfigFrom({}, "/home/someone").git).toMatchObject({ allowedHosts: ["github.com"], configFile: undefined });
    const git = serverConfigFrom({ ORKA_GIT_HOSTS: "github.com, Git.Example.COM ,", ORKA_GIT_CONFIG: "/etc/orka/gitconfig" }, "/home/someone").git;
    expect(git).toMatchObject({ allowedHosts: ["github.com", "git.example.com"], configFile: "/etc/orka/gitconfig" });
  });

  it("polls auto-merges every 30 s unless ORKA_GITHUB_AUTO_MERGE_POLL_INTERVAL says otherwise, and refuses a zero or bad interval", () => {
    expect(serverConfigFrom({}, "/home/someone").githubTools).toEqual({ autoMergePollIntervalMs: 30_000 });
    expect(serverConfigFrom({ ORKA_GITHUB_AUTO_MERGE_POLL_INTERVAL: "250ms" }, "/home/someone").githubTools).toEqual({ autoMergePollIntervalMs: 250 });
    for (const bad of ["0s", "soon"]) {
      expect(() => serverConfigFrom({ ORKA_GITHUB_AUTO_MERGE_POLL_INTERVAL: bad }, "/home/someone")).toThrow("ORKA_GITHUB_AUTO_MERGE_POLL_INTERVAL must be a positive duration such as 30s");
    }
  });

  it("replaces a coding CLI's command with ORKA_RUNTIME_COMMAND_<RUNTIME>, a JSON array, and refuses anything else at start", () => {
    expect(serverConfigFrom({}, "/home/someone").runtimeCommands).toEqual({});
    const commands = serverConfigFrom({ ORKA_RUNTIME_COMMAND_CLAUDE: '["node","/opt/fake cli.mjs"]', ORKA_RUNTIME_COMMAND_OPENCODE: '["/usr/bin/opencode"]' }, "/home/someone");
    expect(commands.runtimeCommands).toEqual({ claude: ["node", "/opt/fake cli.mjs"], opencode: ["/usr/bin/opencode"] });
    for (const bad of ["node fake.mjs", "[]", '[""]', '{"command":"node"}', "[1]"]) {
      expect(() => serverConfigFrom({ ORKA_RUNTIME_COMMAND_CODEX: bad }, "/home/someone")).toThrow(
        'ORKA_RUNTIME_COMMAND_CODEX must be a JSON array of non-empty strings, the command and its arguments, such as ["node","/opt/fake-cli.mjs"]',
      );
    }
  });

  it("reads ORKA_RUNTIME_READ_PATHS as existing absolute paths every coding CLI may read, and refuses anything else at start", () => {
    expect(serverConfigFrom({}, "/home/someone").runtimeReadPaths).toEqual([]);
    expect(serverConfigFrom({ ORKA_RUNTIME_READ_PATHS: " /usr/lib , /etc/" }, "/home/someone").runtimeReadPaths).toEqual(["/usr/lib", "/etc"]);
    for (const bad of ["usr/lib", "/usr/lib,relative", "/no/such/orka-path"]) {
      expect(() => serverConfigFrom({ ORKA_RUNTIME_READ_PATHS: bad }, "/home/someone")).toThrow(/ORKA_RUNTIME_READ_PATHS holds ".*", which is not an existing absolute path/);
    }
  });

  it("refuses session paths that would let a coding CLI read Orka's data or work directory", () => {
    const dirs = { ORKA_DATA_DIR: "/var/lib/orka", ORKA_WORK_DIR: "/tmp/orka-work" };
    const refusal = (variable: string, path: string, dir: string) =>
      `${variable} names ${path}, which would let a coding CLI read Orka's own state in ${dir}: name a path outside the data and work directories`;
    expect(() => serverConfigFrom({ ...dirs, ORKA_RUNTIME_READ_PATHS: "/" }, "/home/someone")).toThrow(refusal("ORKA_RUNTIME_READ_PATHS", "/", "/var/lib/orka"));
    expect(() => serverConfigFrom({ ...dirs, ORKA_RUNTIME_READ_PATHS: "/tmp" }, "/home/someone")).toThrow(refusal("ORKA_RUNTIME_READ_PATHS", "/tmp", "/tmp/orka-work"));
    const inData = { ...dirs, ORKA_RUNTIME_COMMAND_CLAUDE: JSON.stringify(["node", "/var/lib/orka/secret.key"]) };
    expect(() => serverConfigFrom(inData, "/home/someone")).toThrow(refusal("ORKA_RUNTIME_COMMAND_CLAUDE", "/var/lib/orka/secret.key", "/var/lib/orka"));
    expect(serverConfigFrom({ ...dirs, ORKA_RUNTIME_READ_PATHS: "/usr/lib" }, "/home/someone").runtimeReadPaths).toEqual(["/usr/lib"]);
  });
});

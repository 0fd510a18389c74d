import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/util/deep-json.ts";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

const MARKER = "private-file-content-7f3a";

// Issue 12 item 3 (and its review, item 6): only operators name a script file; it must be a regular file of at most 1 MiB
// inside ORKA_SCRIPTED_DIR, and what it holds never shows in status, events or logs.
describe("scripted.file", () => {
  let orka: OrkaUnderTest;
  let userToken = "";
  const root = mkdtempSync(join(tmpdir(), "orka-scripts-"));
  const scripts = join(root, "scripts");

  beforeAll(async () => {
    mkdirSync(scripts);
    writeFileSync(join(scripts, "good.yaml"), "turns:\n  - text: read from the script file\n");
    writeFileSync(join(scripts, "broken.yaml"), `${MARKER}: [unclosed\n  - ${MARKER}\n`);
    writeFileSync(join(scripts, "not-turns.yaml"), `root:x:0:0:${MARKER}:/root:/bin/bash\n`);
    writeFileSync(join(scripts, "unknown-key.yaml"), `turns:\n  - text: hi\n    ${MARKER}: x\n`);
    const deepArguments = `${'{"a":'.repeat(MAX_JSON_DEPTH)}{}${"}".repeat(MAX_JSON_DEPTH)}`;
    writeFileSync(join(scripts, "deep.json"), `[{"toolCalls":[{"name":"file_read","arguments":${deepArguments}}]},{"text":"done"}]`);
    writeFileSync(join(scripts, "big.yaml"), `# ${MARKER}\n${"x".repeat(1024 * 1024 + 1)}`);
    writeFileSync(join(root, "outside.yaml"), "turns:\n  - text: outside the directory\n");
    symlinkSync(join(root, "outside.yaml"), join(scripts, "escape.yaml"));
    symlinkSync("/dev/zero", join(scripts, "zero.yaml"));
    execFileSync("mkfifo", [join(scripts, "pipe.yaml")]);
    orka = await startOrkaServer({ ORKA_SCRIPTED_DIR: scripts });
    userToken = (await orka.api("POST", "/api/v1/auth/tokens", { name: "user-a", namespace: "default" })).body.token;
  });
  afterAll(async () => {
    await orka?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const provider = (name: string, file: string) => ({ metadata: { name }, spec: { type: "scripted", scripted: { file } } });

  it("refuses a file named by a user-role token, and one outside ORKA_SCRIPTED_DIR from anyone", async () => {
    for (const file of ["/etc/passwd", "good.yaml"]) {
      const refused = await orka.api("POST", "/api/v1/providers", provider("mine", file), userToken);
      expect([refused.status, refused.body.error?.message]).toEqual([400, "spec.scripted.file can only be set with an admin or operator token"]);
    }
    for (const file of ["/etc/passwd", "../outside.yaml", join(orka.dataDir, "state", "orka.db")]) {
      const refused = await orka.api("POST", "/api/v1/providers", provider("outside", file));
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toBe(`spec.scripted.file must name a file inside ORKA_SCRIPTED_DIR (${scripts})`);
    }
    expect((await orka.api("GET", "/api/v1/providers/mine")).status).toBe(404);
  });

  it("plays a file inside the directory, and fails a Task on any other file without quoting it", async () => {
    const cases = {
      good: undefined,
      broken: 'scripted file "broken.yaml" is not valid YAML or JSON',
      "not-turns": 'scripted file "not-turns.yaml": turns: ',
      "unknown-key": 'scripted file "unknown-key.yaml": turns.0: has fields a script does not take (a turn has text and toolCalls; a tool call has name and arguments)',
      deep: `scripted file "deep.json" nests more than ${MAX_JSON_DEPTH} levels deep; flatten it`,
      big: 'scripted file "big.yaml" is larger than 1048576 bytes',
      escape: 'scripted file "escape.yaml" leads outside ORKA_SCRIPTED_DIR',
      zero: 'scripted file "zero.yaml" leads outside ORKA_SCRIPTED_DIR',
      pipe: 'scripted file "pipe.yaml" is not a regular file',
    };
    for (const name of Object.keys(cases)) {
      expect((await orka.api("POST", "/api/v1/providers", provider(name, name === "deep" ? "deep.json" : `${name}.yaml`))).status).toBe(201);
      const task = await orka.api("POST", "/api/v1/tasks", { name: `run-${name}`, type: "ai", prompt: "go", ai: { providerRef: { name } } }, userToken);
      expect(task.status, JSON.stringify(task.body)).toBe(201);
    }
    for (const [name, reason] of Object.entries(cases)) {
      const task = await orka.waitFor(`run-${name}`);
      if (reason === undefined) {
        expect(task.status.phase).toBe("Succeeded");
        expect((await orka.api("GET", `/api/v1/tasks/run-${name}/result`, undefined, userToken)).body.result).toBe("read from the script file");
        continue;
      }
      expect(task.status.phase, name).toBe("Failed");
      expect(task.status.message).toContain(`provider ${name} is not ready: ${reason}`);
      const events = await orka.api("GET", `/api/v1/tasks/run-${name}/events`, undefined, userToken);
      const logs = await orka.api("GET", `/api/v1/tasks/run-${name}/logs`, undefined, userToken);
      expect(JSON.stringify([task, events.body, logs.body])).not.toContain(MARKER);
    }
  });
});

describe("scripted.file without ORKA_SCRIPTED_DIR", () => {
  let orka: OrkaUnderTest;
  beforeAll(async () => (orka = await startOrkaServer()));
  afterAll(() => orka?.stop());

  it("is refused even for an admin, with a message naming the setting", async () => {
    const refused = await orka.api("POST", "/api/v1/providers", { metadata: { name: "filed" }, spec: { type: "scripted", scripted: { file: "turns.yaml" } } });
    expect([refused.status, refused.body.error?.message]).toEqual([
      400,
      "spec.scripted.file needs ORKA_SCRIPTED_DIR: set it to the directory that holds script files, or use spec.scripted.turns",
    ]);
  });
});

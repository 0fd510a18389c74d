import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

// Spec P6 through the real `orka` CLI against a real server.
describe("P6 CLI", () => {
  let orka: OrkaUnderTest;
  beforeAll(async () => (orka = await startOrkaServer()));
  afterAll(() => orka.stop());

  it("creates a secret from literals and lists names and keys, never values", async () => {
    const created = await orka.cli(["secret", "create", "creds", "--from-literal", "api-key=sk-cli-secret-999", "--from-literal", "user=me"]);
    expect(created.stdout.trim()).toBe("secret/creds created");
    const listed = await orka.cli(["secret", "list"]);
    expect(listed.stdout).toMatch(/creds\s+Opaque\s+api-key,user/);
    expect(listed.stdout).not.toContain("sk-cli-secret-999");
    const bad = await orka.cli(["secret", "create", "oops", "--from-literal", "novalue"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--from-literal "novalue": use key=value');
  });

  it("creates a Task from flags, waits with progress, and prints the result", async () => {
    const created = await orka.cli(["task", "create", "--name", "from-flags", "--type", "container", "--prompt", "unused"]);
    expect(created.code).not.toBe(0);
    expect(created.stderr).toContain("error: spec.command: container tasks need a command (or an image, with a container runtime)");
    const file = join(orka.dataDir, "task.yaml");
    await import("node:fs").then((fs) => fs.writeFileSync(file, "name: from-file\ntype: container\ncommand: [sh, -c, 'sleep 4; echo made by the cli']\n"));
    expect((await orka.cli(["task", "create", "-f", file])).stdout.trim()).toBe("task/from-file created");
    const waited = await orka.cli(["task", "wait", "from-file", "--timeout", "20s"]);
    expect(waited.code).toBe(0);
    expect(waited.stderr).toMatch(/task\/from-file: (Pending|Running)/);
    expect(waited.stderr).toContain("task/from-file: Succeeded — task completed successfully");
    expect((await orka.cli(["task", "result", "from-file"])).stdout.trim()).toBe("made by the cli");
    expect((await orka.cli(["task", "list", "--status", "succeeded"])).stdout).toMatch(/from-file\s+container\s+Succeeded/);
    const yaml = parse((await orka.cli(["get", "task", "from-file", "-o", "yaml"])).stdout);
    expect(yaml.status.phase).toBe("Succeeded");
  });

  it("prints the dashboard sign-in URL, with the token masked when asked", async () => {
    const plain = await orka.cli(["login", "--no-open"]);
    expect(plain.stdout.trim()).toBe(`${orka.url}/#token=${encodeURIComponent(orka.token)}`);
    const masked = await orka.cli(["login", "--no-open", "--redact-token"]);
    expect(masked.stdout).not.toContain(orka.token);
    expect(masked.stdout.trim()).toMatch(new RegExp(`^${orka.url}/#token=test`));
  });

  it("keeps server, namespace and a masked token in the config file", async () => {
    expect((await orka.cli(["config", "set-server", "http://example.invalid:1"])).code).toBe(0);
    expect((await orka.cli(["config", "set-token", "--file", "-"], "tok-1234567890\n")).code).toBe(0);
    const view = JSON.parse((await orka.cli(["config", "view"])).stdout);
    expect(view).toEqual({ server: "http://example.invalid:1", token: "tok-…7890" });
    expect(parse(readFileSync(join(orka.dataDir, "cli-config.yaml"), "utf8")).token).toBe("tok-1234567890");
  });

  it("creates a namespace-bound token with --namespace after the subcommand, lists it without its value, and revokes it", async () => {
    const created = await orka.cli(["token", "create", "ci", "--namespace", "team-a", "--role", "user"]);
    expect(created.stderr).toBe("");
    const token = created.stdout.trim();
    expect(token).toMatch(/^orka_\S{20,}$/);
    const whoami = await orka.api("GET", "/api/v1/auth/whoami", undefined, token);
    expect(whoami.body).toMatchObject({ name: "ci", namespace: "team-a", role: "user", admin: false });

    expect((await orka.cli(["token", "create", "reviewer-1", "-n", "team-b", "--role", "reviewer"])).code).toBe(0);
    const listed = await orka.cli(["token", "list"]);
    expect(listed.stdout).toMatch(/^NAME\s+NAMESPACE\s+ROLE\s+CREATED\n/);
    expect(listed.stdout).toMatch(/\nci\s+team-a\s+user\s+\d{4}-\d\d-\d\dT/);
    expect(listed.stdout).toMatch(/\nreviewer-1\s+team-b\s+reviewer\s+/);
    expect(listed.stdout).not.toContain(token);
    const json = JSON.parse((await orka.cli(["token", "list", "-o", "json"])).stdout);
    expect(json.map((t: Record<string, unknown>) => Object.keys(t).sort())).toEqual([["createdAt", "name", "namespace", "role"], ["createdAt", "name", "namespace", "role"]]);

    const again = await orka.cli(["token", "create", "ci", "--namespace", "team-a"]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('a token named "ci" exists; revoke it first (orka token revoke ci) or choose another name');
    const noNamespace = await orka.cli(["token", "create", "other"]);
    expect(noNamespace.code).not.toBe(0);
    expect(noNamespace.stderr).toContain("give the token's namespace: orka token create other --namespace <ns>");

    const asUser = await orka.cli(["--token", token, "token", "list"]);
    expect(asUser.code).not.toBe(0);
    expect(asUser.stderr).toContain("listing tokens needs an admin token");

    expect((await orka.cli(["token", "revoke", "ci"])).stdout.trim()).toBe("token/ci revoked");
    expect((await orka.api("GET", "/api/v1/auth/whoami", undefined, token)).status).toBe(401);
    expect((await orka.cli(["token", "list"])).stdout).not.toMatch(/\nci\s/);
    const unknown = await orka.cli(["token", "revoke", "ci"]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('no token named "ci"; orka token list shows the names');
  });

  it("refuses an unknown kind and an unreachable server with a message that says what to do", async () => {
    const unknown = await orka.cli(["get", "widgets"]);
    expect(unknown.stderr).toContain('unknown kind "widgets"');
    const { code, stderr } = await orka.cli(["--server", "http://127.0.0.1:1", "get", "tasks"]);
    expect(code).not.toBe(0);
    expect(stderr).toContain("cannot reach the Orka server at http://127.0.0.1:1");
  });
});

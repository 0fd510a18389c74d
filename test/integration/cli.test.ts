import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION, startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

// The real `orka` CLI against a real server.
/** Tests that run the CLI a dozen times: each run starts a Node process, slow on a loaded machine. */
const CLI_HEAVY_MS = 120_000;
describe("the orka CLI against a real server", () => {
  let orka: OrkaUnderTest;
  // Loopback egress: the apply tests' Tools call this server and a capture server on 127.0.0.1.
  beforeAll(async () => (orka = await startOrkaServer({ ORKA_ALLOW_LOOPBACK_EGRESS: "true" })));
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
  }, CLI_HEAVY_MS);

  describe("apply", () => {
    const write = (name: string, text: string) => {
      writeFileSync(join(orka.dataDir, name), text);
      return join(orka.dataDir, name);
    };
    const provider = (turn: string) => `apiVersion: ${API_VERSION}\nkind: Provider\nmetadata: {name: apply-p}\nspec: {type: scripted, scripted: {turns: [{text: "${turn}"}]}}\n`;
    const tool = (labels = "") => `apiVersion: ${API_VERSION}\nkind: Tool\nmetadata: {name: apply-t${labels}}\nspec: {description: d, http: {url: "http://127.0.0.1:1/x"}}\n`;
    const agent = (prompt: string) => `apiVersion: ${API_VERSION}\nkind: Agent\nmetadata: {name: apply-a}\nspec: {providerRef: {name: apply-p}, systemPrompt: {inline: "${prompt}"}}\n`;
    const task = (name: string, prompt: string) => `apiVersion: ${API_VERSION}\nkind: Task\nmetadata: {name: ${name}}\nspec: {type: ai, agentRef: {name: apply-a}, prompt: "${prompt}"}\n`;
    const versions = async () =>
      Object.fromEntries(
        await Promise.all(["providers/apply-p", "tools/apply-t", "agents/apply-a"].map(async (path) => [path, (await orka.api("GET", `/api/v1/${path}`)).body.metadata.resourceVersion])),
      );

    it("re-applying an unchanged Provider, Tool and Agent prints unchanged and writes nothing", async () => {
      const file = write("apply.yaml", [provider("hi"), tool(), agent("be kind")].join("---\n"));
      expect((await orka.cli(["apply", "-f", file])).stdout).toBe("provider/apply-p created\ntool/apply-t created\nagent/apply-a created\n");
      const before = await versions();
      const again = await orka.cli(["apply", "-f", file]);
      expect(again.stdout).toBe("provider/apply-p unchanged\ntool/apply-t unchanged\nagent/apply-a unchanged\n");
      expect(await versions()).toEqual(before);

      write("apply.yaml", [provider("hi"), tool(", labels: {team: a}"), agent("be brief")].join("---\n"));
      expect((await orka.cli(["apply", "-f", file])).stdout).toBe("provider/apply-p unchanged\ntool/apply-t configured\nagent/apply-a configured\n");
      const after = await versions();
      expect(after["providers/apply-p"]).toBe(before["providers/apply-p"]);
      expect(after["tools/apply-t"]).not.toBe(before["tools/apply-t"]);
      expect(after["agents/apply-a"]).not.toBe(before["agents/apply-a"]);
    }, CLI_HEAVY_MS);

    it("refuses to change a Task's spec, exits non-zero and applies nothing", async () => {
      const file = write("task.yaml", task("apply-task", "first"));
      expect((await orka.cli(["apply", "-f", file])).stdout).toBe("task/apply-task created\n");
      expect((await orka.cli(["apply", "-f", file])).stdout).toBe("task/apply-task unchanged (a Task runs once; delete it to run it again)\n");

      write("task.yaml", [agent("a new agent"), task("apply-task", "second")].join("---\n").replace("apply-a}", "apply-new}"));
      const changed = await orka.cli(["apply", "-f", file]);
      expect(changed.code).not.toBe(0);
      expect(changed.stdout).toBe("");
      expect(changed.stderr).toContain(
        "task/apply-task: a Task's spec cannot change after creation; delete it first (orka delete task apply-task) or give the new Task another name. Nothing was applied.",
      );
      expect((await orka.api("GET", "/api/v1/agents/apply-new")).status).toBe(404);
      expect((await orka.api("GET", "/api/v1/tasks/apply-task")).body.spec.prompt).toBe("first");
    }, CLI_HEAVY_MS);

    it("applies every .yaml and .yml file of a directory, in name order", async () => {
      const dir = join(orka.dataDir, "manifests");
      mkdirSync(dir);
      writeFileSync(join(dir, "b-agent.yaml"), agent("from b"));
      writeFileSync(join(dir, "a-provider.yml"), provider("from a"));
      writeFileSync(join(dir, "notes.txt"), "not: yaml at all: [");
      const applied = await orka.cli(["apply", "-f", dir]);
      expect(applied.stderr).toBe("");
      expect(applied.stdout).toMatch(/^provider\/apply-p (configured|created)\nagent\/apply-a (configured|created)\n$/);
      expect((await orka.api("GET", "/api/v1/agents/apply-a")).body.spec.systemPrompt.inline).toBe("from b");

      const empty = join(orka.dataDir, "empty");
      mkdirSync(empty);
      const none = await orka.cli(["apply", "-f", empty]);
      expect(none.code).not.toBe(0);
      expect(none.stderr).toContain(`${empty} has no .yaml, .yml or .json files to apply`);
    }, CLI_HEAVY_MS);

    it("applies the .json files of a directory too", async () => {
      const dir = join(orka.dataDir, "json-manifests");
      mkdirSync(dir);
      const jsonTool = { apiVersion: API_VERSION, kind: "Tool", metadata: { name: "from-json" }, spec: { description: "d", http: { url: "http://127.0.0.1:1/json" } } };
      writeFileSync(join(dir, "tool.json"), JSON.stringify(jsonTool));
      const applied = await orka.cli(["apply", "-f", dir]);
      expect(applied.stderr).toBe("");
      expect(applied.stdout).toBe("tool/from-json created\n");
      expect((await orka.api("GET", "/api/v1/tools/from-json")).body.spec.http.url).toBe("http://127.0.0.1:1/json");
    }, CLI_HEAVY_MS);

    it("names the Task's namespace in the delete command it suggests, and that command works", async () => {
      const nsTask = (command: string) => `apiVersion: ${API_VERSION}\nkind: Task\nmetadata: {name: ns-task, namespace: apply-ns}\nspec: {type: container, command: [sh, -c, "${command}"]}\n`;
      const file = write("ns-task.yaml", nsTask("exit 0"));
      expect((await orka.cli(["apply", "-f", file])).stdout).toBe("task/ns-task created\n");
      write("ns-task.yaml", nsTask("exit 1"));
      const changed = await orka.cli(["apply", "-f", file]);
      expect(changed.code).not.toBe(0);
      const suggested = /delete it first \((orka delete [^)]*)\)/.exec(changed.stderr)?.[1];
      expect(suggested).toBe("orka delete task ns-task -n apply-ns");
      expect((await orka.cli(suggested!.split(" ").slice(1))).stdout).toBe("task/ns-task deleted\n");
      expect((await orka.api("GET", "/api/v1/tasks/ns-task?namespace=apply-ns")).status).toBe(404);
    }, CLI_HEAVY_MS);

    it("fills in ${ORKA_SERVER} only in a Tool's spec.http.url: Secret values and prompts keep it literally", async () => {
      const authHeaders: string[] = [];
      const capture = http.createServer((req, res) => {
        if (req.method !== "HEAD") authHeaders.push(String(req.headers.authorization));
        res.writeHead(200, { "content-type": "application/json" }).end('{"captured":true}');
      });
      await new Promise<void>((resolve) => capture.listen(0, "127.0.0.1", resolve));
      try {
        const captureURL = `http://127.0.0.1:${(capture.address() as AddressInfo).port}/capture`;
        const file = write(
          "placeholder.yaml",
          `apiVersion: v1
kind: Secret
metadata: {name: literal-cred}
stringData: {token: "\${ORKA_SERVER}"}
---
apiVersion: ${API_VERSION}
kind: Tool
metadata: {name: self-health}
spec: {description: d, http: {url: "\${ORKA_SERVER}/healthz", method: GET}}
---
apiVersion: ${API_VERSION}
kind: Tool
metadata: {name: capture}
spec: {description: d, http: {url: "${captureURL}", authSecretRef: {name: literal-cred, key: token}}}
---
apiVersion: ${API_VERSION}
kind: Provider
metadata: {name: placeholder-p}
spec: {type: scripted, scripted: {turns: [{toolCalls: [{name: capture, arguments: {}}]}, {text: done}]}}
---
apiVersion: ${API_VERSION}
kind: Agent
metadata: {name: placeholder-a}
spec: {providerRef: {name: placeholder-p}, tools: [{name: capture}]}
---
apiVersion: ${API_VERSION}
kind: Task
metadata: {name: placeholder-task}
spec: {type: ai, agentRef: {name: placeholder-a}, prompt: "print \${ORKA_SERVER} as it is"}
`,
        );
        const applied = await orka.cli(["apply", "-f", file]);
        expect(applied.stderr).toBe("");
        expect((await orka.api("GET", "/api/v1/tools/self-health")).body.spec.http.url).toBe(`${orka.url}/healthz`);
        expect((await orka.waitFor("placeholder-task")).status.phase).toBe("Succeeded");
        expect(authHeaders).toEqual(["Bearer ${ORKA_SERVER}"]);
        expect((await orka.api("GET", "/api/v1/tasks/placeholder-task")).body.spec.prompt).toBe("print ${ORKA_SERVER} as it is");
      } finally {
        capture.close();
      }
    }, CLI_HEAVY_MS);
  });

  it("refuses an unknown kind and an unreachable server with a message that says what to do", async () => {
    const unknown = await orka.cli(["get", "widgets"]);
    expect(unknown.stderr).toContain('unknown kind "widgets"');
    const { code, stderr } = await orka.cli(["--server", "http://127.0.0.1:1", "get", "tasks"]);
    expect(code).not.toBe(0);
    expect(stderr).toContain("cannot reach the Orka server at http://127.0.0.1:1");
  });
});

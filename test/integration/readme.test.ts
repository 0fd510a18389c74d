import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const QUICKSTART = join(ROOT, "examples/quickstart.yaml");
const HEALTHY_ANSWER = `The Orka server's health check answered: {"status":"ok"}. Hello from your first Orka Task!`;

/** Every shell command the README shows, in its order: lines of ```sh blocks and inline `bin/orka …` / `npm …`. */
function readmeCommands(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const found: [number, string][] = [];
  for (const block of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1].split("\n")) found.push([block.index, line.replace(/\s+#.*$/, "").replace(/\s*&$/, "").trim()]);
  }
  for (const inline of readme.matchAll(/`((?:bin\/orka|npm) [^`]+)`/g)) found.push([inline.index, inline[1].replace(/\s+/g, " ")]);
  return [...new Set(found.sort((a, b) => a[0] - b[0]).map(([, command]) => command).filter(Boolean))];
}

/** Commands this file does not run, and where each is covered instead. */
const COVERED_ELSEWHERE: Record<string, string> = {
  "npm run demo": "test/integration/demo.test.ts runs scripts/demo.ts",
  "npm test": "it runs this suite",
  "npm start": "builds the dashboard, then runs `orka serve`, which startOrkaServer starts",
  "ORKA_ALLOW_LOOPBACK_EGRESS=true npm start": "startOrkaServer starts `orka serve` with the same setting",
  "bin/orka serve": "startOrkaServer starts it, on a free port",
  "npm run bench": "bench/ prints figures; it asserts nothing",
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe("the README, as a new user runs it", () => {
  let orka: OrkaUnderTest;
  let cliConfig: string;
  const adminToken = () => parse(readFileSync(cliConfig, "utf8")).token as string;
  const asUser = (token: string) => orka.api("GET", "/api/v1/auth/whoami", undefined, token);

  // What each command must do; a README command with no entry here (or above) fails the test.
  const EXPECTED: Record<string, (run: Run) => void | Promise<void>> = {
    "bin/orka apply -f examples/quickstart.yaml": (run) =>
      expect(run.stdout).toBe("provider/offline created\ntool/server-health created\nagent/greeter created\ntask/hello created\n"),
    "bin/orka task wait hello": (run) => expect(run.stderr).toContain("task/hello: Succeeded"),
    "bin/orka task result hello": (run) => expect(run.stdout).toBe(`${HEALTHY_ANSWER}\n`),
    "bin/orka task events hello": (run) => expect(run.stdout).toContain("[server-health]"),
    "bin/orka login": (run) => expect(run.stdout.trim()).toBe(`${orka.url}/#token=${encodeURIComponent(adminToken())}`),
    "bin/orka token create ci --namespace team-a --role user": async (run) =>
      expect((await asUser(run.stdout.trim())).body).toMatchObject({ name: "ci", namespace: "team-a", role: "user" }),
    "bin/orka token list": (run) => expect(run.stdout).toMatch(/\nci\s+team-a\s+user\s+\d{4}-/),
    "bin/orka token revoke ci": (run) => expect(run.stdout).toBe("token/ci revoked\n"),
  };

  beforeAll(async () => {
    // No ORKA_ADMIN_TOKEN: the server generates one and writes the CLI config, as on a first start.
    orka = await startOrkaServer({ ORKA_ADMIN_TOKEN: undefined, ORKA_ALLOW_LOOPBACK_EGRESS: "true" });
    cliConfig = join(orka.dataDir, "cli-config.yaml");
  });
  afterAll(() => orka.stop());

  /** Runs a command line verbatim from the checkout, with only the CLI config the server wrote. */
  const shell = (command: string): Promise<Run> => {
    const env: Record<string, string | undefined> = { ...process.env, ORKA_CLI_CONFIG: cliConfig };
    for (const name of ["ORKA_SERVER", "ORKA_TOKEN", "ORKA_NAMESPACE", "ORKA_TXN_TOKEN", "DISPLAY", "WAYLAND_DISPLAY"]) delete env[name];
    return promisify(execFile)("bash", ["-c", command], { cwd: ROOT, env, timeout: 60_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err) => ({ code: err.code ?? 1, stdout: String(err.stdout ?? ""), stderr: String(err.stderr ?? "") }),
    );
  };

  it("runs every command the README shows, verbatim, and each does what the README says", async () => {
    const commands = readmeCommands();
    expect(commands.filter((c) => !(c in EXPECTED) && !(c in COVERED_ELSEWHERE))).toEqual([]);
    expect(Object.keys(EXPECTED).filter((c) => !commands.includes(c))).toEqual([]);
    for (const command of commands.filter((c) => c in EXPECTED)) {
      const run = await shell(command);
      expect({ command, code: run.code, stderr: run.code === 0 ? "" : run.stderr }).toEqual({ command, code: 0, stderr: "" });
      await EXPECTED[command](run);
    }
    expect((await asUser(adminToken())).body.admin).toBe(true);
  }, 180_000);

  it("the quickstart's answer quotes its Tool: a Tool that fails is not reported healthy", async () => {
    const broken = readFileSync(QUICKSTART, "utf8").replaceAll("${ORKA_SERVER}", "http://127.0.0.1:1");
    const applied = await shell(`bin/orka -n quickstart-broken apply -f - <<'EOF'\n${broken}\nEOF`);
    expect(applied.code).toBe(0);
    expect((await shell("bin/orka -n quickstart-broken task wait hello --timeout 60s")).stderr).toContain("task/hello: Succeeded");
    const result = (await shell("bin/orka -n quickstart-broken task result hello")).stdout;
    expect(result).toMatch(/^The Orka server's health check answered: .+\. Hello from your first Orka Task!\n$/);
    expect(result).not.toContain('{"status":"ok"}');
  }, 90_000);
});

describe("a second server on another port", () => {
  it("leaves the CLI config of the first one alone and says so; the first one keeps it current", async () => {
    const first = await startOrkaServer({ ORKA_ADMIN_TOKEN: undefined });
    const cliConfig = join(first.dataDir, "cli-config.yaml");
    let second: OrkaUnderTest | undefined;
    try {
      const written = parse(readFileSync(cliConfig, "utf8"));
      expect(written.server).toBe(first.url);
      await expect.poll(() => first.output()).toContain(`orka: the CLI config ${cliConfig} points at this server`);

      second = await startOrkaServer({ ORKA_ADMIN_TOKEN: undefined, ORKA_CLI_CONFIG: cliConfig });
      expect(parse(readFileSync(cliConfig, "utf8"))).toEqual(written);
      await expect.poll(() => second!.output()).toContain(
        `orka: the CLI config ${cliConfig} names another server or token (server ${first.url}) and was left as it is; to use this server as admin: bin/orka config set-server ${second.url} && bin/orka config set-token --file ${join(second.dataDir, "state/admin-token")}`,
      );

      await first.restart();
      expect(parse(readFileSync(cliConfig, "utf8"))).toEqual({ ...written, server: first.url });
    } finally {
      await second?.stop();
      await first.stop();
    }
  }, 90_000);
});

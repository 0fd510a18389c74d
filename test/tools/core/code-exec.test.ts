import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { toolHarness } from "../../helpers/tools.ts";

/**
 * Live processes whose command line carries the marker (other tests may run sandboxes at the
 * same time, so the sandbox uid alone proves nothing). Zombies hold only a pid and are not counted.
 */
function sandboxProcesses(marker: string): number {
  let count = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, "utf8"))) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) count++;
    } catch {
      // gone
    }
  }
  return count;
}

const uniqueMarker = (name: string) => `orka${name}${process.pid}${Math.random().toString(36).slice(2, 8)}`;

describe("code_exec", () => {
  let tools: Awaited<ReturnType<typeof toolHarness>>;
  beforeEach(async () => (tools = await toolHarness()));
  afterEach(() => tools.close());

  it("runs each language, keeps stderr apart and reports the exit code", async () => {
    expect(await tools.call("code_exec", { language: "bash", code: "echo hello" })).toEqual({ output: "hello\n", exit_code: 0 });
    expect(await tools.call("code_exec", { language: "Python3", code: "import sys\nprint(6*7)\nprint('oops', file=sys.stderr)\nsys.exit(3)" })).toEqual({
      output: "42\n",
      error: "oops\n",
      exit_code: 3,
    });
    expect(await tools.call("code_exec", { language: "NODE", code: "console.log([1,2,3].map(x => x * 2).join(','))" })).toMatchObject({ output: "2,4,6\n", exit_code: 0 });
    expect(await tools.call("code_exec", { language: "python", code: "print('rm -rf /')" })).toMatchObject({ output: "rm -rf /\n" });
    expect(await tools.call("code_exec", { language: "bash", code: "read line; echo \"got:$line:$?\"" })).toMatchObject({ output: "got::1\n" });
    await expect(tools.call("code_exec", { language: "ruby", code: "puts 1" })).rejects.toThrow("unsupported language: ruby");
    await expect(tools.call("code_exec", { language: "bash", code: "  " })).rejects.toThrow("code is required");
  });

  it("without bubblewrap, fails with the command that installs it", async () => {
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      expect(await tools.call("code_exec", { language: "bash", code: "echo hi" })).toEqual({
        output: "",
        error: "code_exec sandbox unavailable: container runtime not available: bubblewrap (bwrap) is not installed; install it with `apt-get install bubblewrap` (as root)",
        exit_code: -1,
      });
    } finally {
      process.env.PATH = path;
    }
  });

  it("shares /workspace with file_write and file_read", async () => {
    await tools.call("file_write", { path: "data.csv", content: "a,b\n1,2\n" });
    const run = await tools.call("code_exec", { language: "python", code: "rows = open('data.csv').read().splitlines()\nopen('out.txt','w').write(str(len(rows)))\nprint(rows[1])" });
    expect(run).toMatchObject({ output: "1,2\n", exit_code: 0 });
    expect((await tools.call("file_read", { path: "out.txt" })).content).toBe("2");
  });

  it("gives the code a clean environment with no secrets", async () => {
    process.env.ORKA_TEST_SECRET = "sk-should-not-leak";
    try {
      const run = await tools.call("code_exec", { language: "bash", code: "env | sort; cat /proc/1/environ 2>/dev/null | tr '\\0' '\\n'" });
      expect(run.output).not.toContain("sk-should-not-leak");
      expect(run.output).toContain("PATH=/usr/local/bin:/usr/bin:/bin");
      expect(run.output).toContain("HOME=/tmp");
    } finally {
      delete process.env.ORKA_TEST_SECRET;
    }
  });

  it("blocks rm -rf before spawning anything", async () => {
    expect(await tools.call("code_exec", { language: "bash", code: "rm -rf /" })).toEqual({ output: "", error: "command blocked by safety guard: rm with -r/-f", exit_code: -1 });
  });

  it("kills an infinite loop at its timeout and keeps what it printed", async () => {
    const marker = uniqueMarker("loop");
    const started = Date.now();
    const run = await tools.call("code_exec", { language: "bash", code: `echo before\nexec -a ${marker} bash -c 'while :; do :; done'`, timeout: 2 });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(run).toMatchObject({ output: "before\n", exit_code: -1, timed_out: true });
    expect(run.error).toContain("execution timed out");
    for (let i = 0; i < 20 && sandboxProcesses(marker) > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(sandboxProcesses(marker)).toBe(0);
  });

  // Through the tool, on a fake clock: the deadline timer is the only one faked, so the sandboxed
  // process runs for real while the clock jumps to just before, then to, the expected deadline.
  it.each([
    [120, 60],
    [0, 30],
    [-5, 30],
  ])("runs a timeout of %s seconds for %s seconds", async (timeout, seconds) => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      let settled = false;
      const run = tools.call("code_exec", { language: "bash", code: "echo started; sleep 100", timeout }).finally(() => (settled = true));
      for (let i = 0; i < 500 && vi.getTimerCount() === 0; i++) await sleep(10);
      await vi.advanceTimersByTimeAsync(seconds * 1000 - 1);
      await sleep(300);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const result = await Promise.race([run, sleep(5000).then(() => "still running")]);
      expect(result).toMatchObject({ output: "started\n", exit_code: -1, timed_out: true });
    } finally {
      vi.useRealTimers();
    }
  });

  // Bounded — every loop stops after a fixed number of tries.
  it("stops a bounded fork flood at the process limit, leaving no process behind", async () => {
    const marker = uniqueMarker("fork");
    const started = Date.now();
    // exec -a names the interpreter after the marker; forked children keep that command line.
    const flood = [
      "import os, time",
      "started = failed = 0",
      "for _ in range(2000):",
      "    try:",
      "        pid = os.fork()",
      "    except OSError:",
      "        failed += 1",
      "        continue",
      "    if pid == 0:",
      "        time.sleep(3); os._exit(0)",
      "    started += 1",
      "print(started, failed)",
    ].join("\n");
    const run = await tools.call("code_exec", {
      language: "bash",
      code: `cat > /tmp/flood.py <<'PY'\n${flood}\nPY\nexec -a ${marker} python3 /tmp/flood.py`,
      timeout: 5,
    });
    expect(Date.now() - started).toBeLessThan(7000);
    const [forked, refused] = run.output.trim().split(" ").map(Number);
    expect(forked).toBeLessThan(300);
    expect(refused).toBeGreaterThan(1000);
    for (let i = 0; i < 30 && sandboxProcesses(marker) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(sandboxProcesses(marker)).toBe(0);
  });

  it("caps each stream at 64 KiB with a marker", async () => {
    const run = await tools.call("code_exec", { language: "python", code: "import sys\nsys.stdout.write('x' * 10**7)\nsys.stderr.write('e' * 100000)" });
    expect(run.output_truncated).toBe(true);
    expect(run.output).toBe(`${"x".repeat(65536)}\n[truncated after 65536 bytes; ${10 ** 7 - 65536} bytes omitted]`);
    expect(run.error_truncated).toBe(true);
    expect(run.exit_code).toBe(0);
  });

  describe("sandbox escapes", () => {
    let listener: http.Server;
    let port = 0;
    beforeAll(async () => {
      listener = http.createServer((_req, res) => res.end("reached"));
      await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
      port = (listener.address() as AddressInfo).port;
    });
    afterAll(() => listener.close());

    it("has no network: the host's loopback listener is unreachable and there is no route", async () => {
      const run = await tools.call("code_exec", {
        language: "python",
        code: `import socket\ntry:\n    socket.create_connection(('127.0.0.1', ${port}), timeout=2)\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\nprint(open('/proc/net/route').read().count('\\n'))\nimport os\nprint(sorted(os.listdir('/sys/class/net')) if os.path.exists('/sys/class/net') else ['lo-only'])`,
      });
      expect(run.output).toMatch(/^refused \d+\n1\n/);
      expect(run.output).not.toContain("connected");
    });

    it("cannot write the system, read the worker's secrets, or exceed memory and file-size limits", async () => {
      writeFileSync(join(tools.workspaceDir, "marker"), "x");
      const run = await tools.call("code_exec", {
        language: "bash",
        code: [
          "touch /usr/pwned 2>/dev/null && echo usr-writable",
          "touch /etc/pwned 2>/dev/null && echo etc-writable",
          "touch /pwned 2>/dev/null && echo root-writable",
          "cat /proc/1/environ 2>/dev/null | grep -a ORKA && echo saw-env",
          "python3 -c 'b = bytearray(4 * 1024**3)' 2>/dev/null; echo alloc=$?",
          "head -c 209715200 /dev/zero > big 2>/dev/null; echo write=$?; stat -c %s big",
        ].join("\n"),
        timeout: 20,
      });
      expect(run.output).not.toMatch(/usr-writable|etc-writable|root-writable|saw-env/);
      expect(run.output).toMatch(/alloc=[1-9]/);
      expect(run.output).toMatch(/write=[1-9]/);
      expect(Number(run.output.trim().split("\n").at(-1))).toBeLessThanOrEqual(64 * 1024 * 1024);
    });
  });
});

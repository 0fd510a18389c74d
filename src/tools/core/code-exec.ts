import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { exitCodeOf, runSandboxed, type SandboxLimits } from "../../sandbox/bwrap.ts";
import { errorMessage, OrkaError } from "../../util/errors.ts";
import { defineTool } from "../define.ts";

export const OUTPUT_LIMIT_BYTES = 65_536;
const DEFAULT_TIMEOUT_S = 30;
const MAX_TIMEOUT_S = 60;

/** Limits: CPU 60 s, 2 GiB address space, 256 processes, 64 MiB files, 256 open files (its /tmp is the attempt's, on disk). */
export const CODE_EXEC_LIMITS: SandboxLimits = {
  cpuSeconds: 60,
  memoryBytes: 2 * 1024 ** 3,
  processes: 256,
  fileSizeBytes: 64 * 1024 ** 2,
  openFiles: 256,
  tmpBytes: 128 * 1024 ** 2,
};

const INTERPRETERS: Record<string, { canonical: string; command: string[] }> = {
  python: { canonical: "python", command: ["python3"] },
  python3: { canonical: "python", command: ["python3"] },
  javascript: { canonical: "javascript", command: ["node"] },
  node: { canonical: "javascript", command: ["node"] },
  js: { canonical: "javascript", command: ["node"] },
  bash: { canonical: "bash", command: ["bash"] },
  sh: { canonical: "bash", command: ["bash"] },
};

/** Nothing is inherited from the worker. */
export const CODE_ENV = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: "/tmp",
  TMPDIR: "/tmp",
  TMP: "/tmp",
  TEMP: "/tmp",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  LC_CTYPE: "C.UTF-8",
  TERM: "dumb",
};

/** Defence in depth for shell code, checked before anything is spawned; the sandbox is the boundary. */
const SHELL_GUARDS: [RegExp, string][] = [
  [/\brm\s+(-[a-zA-Z]*[rRf]|--recursive|--force)/, "rm with -r/-f"],
  [/\bdel\s+\/[fq]/i, "del /f or /q"],
  [/\brmdir\s+\/s/i, "rmdir /s"],
  [/(^|[;&|(`]\s*|\$\(\s*)(format|mkfs(\.\w+)?|diskpart)\b/m, "format/mkfs/diskpart"],
  [/\bdd\s+if=/, "dd if="],
  [/>\s*\/dev\/sd[a-z]/, "writing to a disk device"],
  [/\b(shutdown|reboot|poweroff)\b/, "shutdown/reboot/poweroff"],
  [/:\s*\(\s*\)\s*\{[^}]*\}\s*;\s*:/, "fork bomb"],
];

export function shellGuard(code: string): string | undefined {
  return SHELL_GUARDS.find(([pattern]) => pattern.test(code))?.[1];
}

function clampTimeout(seconds: number | undefined): number {
  if (seconds === undefined || !(seconds > 0)) return DEFAULT_TIMEOUT_S;
  return Math.min(seconds, MAX_TIMEOUT_S);
}

interface CodeExecResult {
  output: string;
  error?: string;
  exit_code: number;
  timed_out?: boolean;
  output_truncated?: boolean;
  error_truncated?: boolean;
}

const failure = (error: string): CodeExecResult => ({ output: "", error, exit_code: -1 });

export const codeExec = defineTool({
  name: "code_exec",
  family: "core",
  offeredOnCompat: true,
  // Commands may change the workspace in ways that are not safe to repeat.
  onResume: "unknown",
  description: "Execute code in a sandbox (no network, private /tmp, the Task's /workspace as working directory).",
  parameters: z.object({
    language: z.string().describe("python, javascript or bash"),
    code: z.string().describe("The program text"),
    timeout: z.number().default(DEFAULT_TIMEOUT_S).describe("Seconds, default 30, at most 60"),
  }),
  async run({ language, code, timeout }, ctx): Promise<CodeExecResult> {
    const interpreter = INTERPRETERS[language.trim().toLowerCase()];
    if (!interpreter) throw new OrkaError("invalid_argument", `unsupported language: ${language}`);
    if (!code.trim()) throw new OrkaError("invalid_argument", "code is required");
    if (interpreter.canonical === "bash") {
      const blocked = shellGuard(code);
      if (blocked) return failure(`command blocked by safety guard: ${blocked}`);
    }
    const seconds = clampTimeout(timeout);
    const codeDir = await mkdtemp(join(tmpdir(), "orka-code-"));
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new OrkaError("deadline_exceeded", "execution timed out")), seconds * 1000);
    try {
      await chmod(codeDir, 0o755);
      await writeFile(join(codeDir, "code"), code, { mode: 0o444 });
      const run = await runSandboxed({
        command: [...interpreter.command, "/orka-code/code"],
        workDir: ctx.workspaceDir,
        tmpDir: ctx.tmpDir,
        extraBinds: [{ host: codeDir, sandbox: "/orka-code", readOnly: true }],
        env: CODE_ENV,
        network: false,
        limits: CODE_EXEC_LIMITS,
        maxOutputBytes: OUTPUT_LIMIT_BYTES,
        signal: AbortSignal.any([deadline.signal, ctx.signal]),
      });
      const timedOut = deadline.signal.aborted;
      const notes = [run.stderr, timedOut ? "execution timed out" : ""].filter(Boolean).join("\n");
      return {
        output: run.stdout,
        ...(notes ? { error: notes } : {}),
        exit_code: timedOut ? -1 : exitCodeOf(run),
        ...(timedOut ? { timed_out: true } : {}),
        ...(run.stdoutTruncated ? { output_truncated: true } : {}),
        ...(run.stderrTruncated ? { error_truncated: true } : {}),
      };
    } catch (err) {
      return failure(`code_exec sandbox unavailable: ${errorMessage(err)}`);
    } finally {
      clearTimeout(timer);
      await rm(codeDir, { recursive: true, force: true });
    }
  },
});

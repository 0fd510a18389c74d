import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterEach, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const DEPCRUISE = join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruiser.mjs");
const RULES = join(ROOT, ".dependency-cruiser.cjs");
const REPORT = join(ROOT, "scripts/import-rules-report.ts");

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

/** Runs the import-rule check of `npm test` on a scratch tree of one-line modules. */
function checkTree(files: Record<string, string>): { lines: string[]; status: number | null } {
  const tree = mkdtempSync(join(tmpdir(), "orka-import-rules-"));
  dirs.push(tree);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), source);
  }
  const run = spawnSync(process.execPath, [DEPCRUISE, "--config", RULES, "--output-type", `plugin:${REPORT}`, "src", "ui/src"], {
    cwd: tree,
    encoding: "utf8",
  });
  return { lines: run.stdout.trim().split("\n"), status: run.status };
}

it("fails on an import cycle and on every boundary crossing, one line each", () => {
  const { lines, status } = checkTree({
    "src/store/a.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
    "src/store/b.ts": 'import type { a } from "./a.ts";\nexport const b = 1 as unknown as typeof a;\n',
    "src/controller/reconcile.ts": 'import "../sandbox/bwrap.ts";\nimport "../worker/loop.ts";\n',
    "src/api/compat.ts": 'import "../worker/loop.ts";\nimport "../runner/local/dirs.ts";\nimport "../sandbox/bwrap.ts";\n',
    "src/tools/context.ts": 'import "../runner/runner.ts";\n',
    "src/config.ts": 'import "./tools/core/web-search.ts";\n',
    "src/github/scope.ts": 'import "../api/context.ts";\n',
    "src/api/context.ts": "export {};\n",
    "src/sandbox/bwrap.ts": "export {};\n",
    "src/worker/loop.ts": "export {};\n",
    "src/runner/runner.ts": "export {};\n",
    "src/runner/local/dirs.ts": "export {};\n",
    "src/tools/core/web-search.ts": "export {};\n",
    "ui/src/page.tsx": 'import "../../src/store/a.ts";\n',
  });
  expect(lines.slice(0, -1).sort()).toEqual(
    [
      "error no-circular: src/store/a.ts → src/store/b.ts → src/store/a.ts",
      "error controller-not-sandbox-or-worker: src/controller/reconcile.ts → src/sandbox/bwrap.ts",
      "error controller-not-sandbox-or-worker: src/controller/reconcile.ts → src/worker/loop.ts",
      "error api-not-worker-or-local-runner: src/api/compat.ts → src/worker/loop.ts",
      "error api-not-worker-or-local-runner: src/api/compat.ts → src/runner/local/dirs.ts",
      "error api-not-worker-or-local-runner: src/api/compat.ts → src/sandbox/bwrap.ts",
      "error tools-not-runner: src/tools/context.ts → src/runner/runner.ts",
      "error config-not-concrete-tool: src/config.ts → src/tools/core/web-search.ts",
      "error github-not-api-worker-runner-sandbox: src/github/scope.ts → src/api/context.ts",
      "error ui-not-server: ui/src/page.tsx → src/store/a.ts",
    ].sort(),
  );
  expect(lines.at(-1)).toMatch(/^import rules: 10 violations in \d+ modules;/);
  expect(status).not.toBe(0);
});

it("passes a tree that keeps the rules", () => {
  const { lines, status } = checkTree({
    "src/controller/reconcile.ts": 'import "../runner/runner.ts";\n',
    "src/runner/runner.ts": "export {};\n",
    "ui/src/page.tsx": 'import "./api.ts";\n',
    "ui/src/api.ts": "export {};\n",
  });
  expect(lines).toEqual(["import rules: no violations in 4 modules."]);
  expect(status).toBe(0);
});

it("resolves every import of src/ and ui/src/, so no import escapes the rules", () => {
  const run = spawnSync(process.execPath, [DEPCRUISE, "--config", RULES, "--output-type", "json", "src", "ui/src"], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const result = JSON.parse(run.stdout) as { modules: { source: string; dependencies: { module: string; couldNotResolve: boolean }[] }[] };
  const unresolved = result.modules.flatMap((m) => m.dependencies.filter((d) => d.couldNotResolve).map((d) => `${m.source} → ${d.module}`));
  expect(unresolved).toEqual([]);
  expect(result.modules.filter((m) => m.source.startsWith("ui/src/")).length).toBeGreaterThan(10);
});

// The in-process agent frameworks Orka is measured beside. Their packages are no dependency of Orka:
// they are installed on first use, at pinned versions, into the git-ignored .cache/bench-peers/.
import { execFile } from "node:child_process";
import { copyFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { sha256Hex } from "../../src/util/hash.ts";
import { ensureNpmPackages } from "../../src/util/npm-install.ts";

const run = promisify(execFile);
const HERE = import.meta.dirname;
const CACHE = resolve(HERE, "../../.cache/bench-peers");
// undici at Orka's own version: a peer's tool over HTTP makes its call with the client Orka's server uses for an HTTP Tool.
const PACKAGES = ["@openai/agents@0.20.0", "openai@7.60.0", "@mastra/core@1.71.0", "@ai-sdk/openai@4.0.118", "zod@4.6.7", "undici@8.14.0"];
const SCRIPTS = ["measure.mjs", "oa.mjs", "ma.mjs", "oa-tool-gap.mjs"];

/** Each peer, with the performance goal for Orka's runs/s at 50 as a multiple of the peer's. */
export const PEERS = [
  { name: "@openai/agents", script: "oa.mjs", goal: 1 },
  { name: "@mastra/core", script: "ma.mjs", goal: 2 },
] as const;

export interface PeerFigure {
  peer: string;
  runs: number;
  concurrency: number;
  runs_per_s: number;
  /** The peer's process's CPU time (user + system) per run. */
  cpu_ms_per_run: number;
}

/**
 * The folder the peers run from: the pinned packages, with the peer scripts copied beside them so
 * their imports resolve there (a script resolves packages from where it lies).
 */
export async function preparePeers(): Promise<string> {
  const dir = join(CACHE, sha256Hex(PACKAGES.join(" ")).slice(0, 12));
  await ensureNpmPackages({ what: "the benchmark's peer frameworks", specs: PACKAGES, expects: { path: "node_modules/@mastra/core/package.json", missing: "@mastra/core is not in node_modules" } }, dir);
  for (const script of SCRIPTS) await copyFile(join(HERE, script), join(dir, script));
  return dir;
}

/** Runs one peer script of the folder `preparePeers` answered, to its end; answers what it printed. */
export async function runPeerScript(dir: string, script: string, args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [join(dir, script), ...args], { cwd: dir, timeout: 600_000 });
  return stdout;
}

/** How a peer's `noop` tool does its work: as a function (the peers' own benchmark), or over HTTP as Orka's custom HTTP Tool does. */
export const TOOL_MODES = [
  { label: "its tool a function", toolOverHttp: false },
  { label: "its tool over HTTP, as Orka's", toolOverHttp: true },
] as const;

/**
 * Runs one peer for each `runs` × `concurrency` pair against the fake model on `modelPort`: after one
 * warm-up loop unless `warmUp` is false; its tool a function unless `toolOverHttp` (measure.mjs).
 */
export async function runPeer(
  dir: string,
  script: string,
  modelPort: string,
  pairs: { runs: number; concurrency: number }[],
  { warmUp = true, toolOverHttp = false } = {},
): Promise<PeerFigure[]> {
  const flags = [...(warmUp ? [] : ["--no-warm-up"]), ...(toolOverHttp ? ["--tool-over-http"] : [])];
  const stdout = await runPeerScript(dir, script, [modelPort, ...flags, ...pairs.map((p) => `${p.runs}:${p.concurrency}`)]);
  return stdout.trim().split("\n").map((line) => JSON.parse(line) as PeerFigure);
}

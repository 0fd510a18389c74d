// Resident memory and CPU time of a process and all its descendants, read from Linux's /proc.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const PAGE_BYTES = Number(execFileSync("getconf", ["PAGESIZE"], { encoding: "utf8" }));
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));

interface ProcessStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime: its own CPU and that of the children it has reaped, in ticks. */
  cpuTicks: number;
  /** utime + stime: its own CPU alone, in ticks. */
  ownCpuTicks: number;
  rssPages: number;
}

/** /proc/<pid>/stat (or a thread's, /proc/<pid>/task/<tid>/stat), or undefined when it ended meanwhile. */
function readStat(pid: number, file = `/proc/${pid}/stat`): ProcessStat | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after it follow its last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const field = (n: number) => Number(fields[n - 3]);
  return { pid, ppid: field(4), cpuTicks: field(14) + field(15) + field(16) + field(17), ownCpuTicks: field(14) + field(15), rssPages: field(24) };
}

/**
 * The tree under `rootPid` now: the sum of its processes' resident memory, and their CPU time since they
 * started (a reaped descendant's time counts in the parent that reaped it, so nothing is lost when a
 * process of the tree ends); `rootCpuSeconds` is the root's own CPU time alone.
 */
export function processTreeUsage(rootPid: number): { rssBytes: number; cpuSeconds: number; rootCpuSeconds: number; pids: number[] } {
  const stats = readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map((name) => readStat(Number(name))).filter((stat) => stat !== undefined);
  const children = Map.groupBy(stats, (stat) => stat.ppid);
  const tree: ProcessStat[] = [];
  for (let frontier = stats.filter((stat) => stat.pid === rootPid); frontier.length > 0; ) {
    tree.push(...frontier);
    frontier = frontier.flatMap((stat) => children.get(stat.pid) ?? []);
  }
  return {
    rssBytes: tree.reduce((sum, stat) => sum + stat.rssPages * PAGE_BYTES, 0),
    cpuSeconds: tree.reduce((sum, stat) => sum + stat.cpuTicks, 0) / CLOCK_TICKS,
    rootCpuSeconds: (tree[0]?.ownCpuTicks ?? 0) / CLOCK_TICKS,
    pids: tree.map((stat) => stat.pid),
  };
}

/** The CPU time of a process's main thread alone (its JavaScript), without its helper threads (GC, thread pool, workers). */
export function mainThreadCpuSeconds(pid: number): number {
  return (readStat(pid, `/proc/${pid}/task/${pid}/stat`)?.ownCpuTicks ?? 0) / CLOCK_TICKS;
}

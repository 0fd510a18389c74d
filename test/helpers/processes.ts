import { readdirSync, readFileSync } from "node:fs";

/** The pids of this machine's processes whose command line holds `mark`. */
export function processesMarked(mark: string): number[] {
  return readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      return readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(mark) ? [Number(entry)] : [];
    } catch {
      return []; // gone meanwhile
    }
  });
}

/** Kills what a failed test left behind: every process whose command line holds one of `marks`. */
export function killMarked(marks: string[]): void {
  for (const pid of marks.flatMap(processesMarked)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // ended meanwhile
    }
  }
}

import type { Workspace } from "../resources/task.ts";
import { OrkaError } from "../util/errors.ts";

/**
 * A workspace URL may come from a model (delegate_task), and Orka's git then connects wherever it
 * points: only the hosts the operator lists are reachable this way.
 */
export function checkRepositoryHosts(workspace: Workspace | undefined, allowedHosts: readonly string[]): void {
  if (!workspace) return;
  for (const field of ["gitRepo", "publicationGitRepo"] as const) {
    const value = workspace[field];
    if (value === undefined) continue;
    const host = hostOf(value);
    if (!host || !allowedHosts.includes(host)) {
      throw new OrkaError(
        "invalid_argument",
        `workspace.${field} is on host "${host ?? value}", which is not an allowed git host (allowed: ${allowedHosts.join(", ") || "none"}; the operator lists them in ORKA_GIT_HOSTS)`,
      );
    }
  }
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

import { gitOutput, type GitDirs, type GitSettings } from "./git.ts";

/** What a workspace's attempts changed, as Orka computed it from the files (not as the model described it). */
export interface WorkspaceChange {
  baseSHA: string;
  /** The commit holding the change; `baseSHA` itself when nothing changed. */
  headSHA: string;
  /** Cumulative `git diff --binary --full-index` from base to head. */
  diff: string;
  files: string[];
}

/** The result a Task with a workspace stores: the model's answer beside the change Orka computed. */
export interface ResultEnvelope {
  version: 1;
  summary: string;
  baseSHA: string;
  headSHA: string;
  diff: string;
  files: string[];
  pushBranch?: string;
}

/**
 * Stages everything in the workspace (with `includeIgnored`, also what .gitignore files leave out) and
 * commits it as Orka on top of what is checked out. Run again, it finds the commit it made and makes no other.
 */
export async function commitChange(settings: GitSettings, dirs: GitDirs, baseSHA: string, message: string, options: { includeIgnored?: boolean } = {}): Promise<WorkspaceChange> {
  await gitOutput(settings, ["add", "-A", ...(options.includeIgnored ? ["--force"] : []), "."], { dirs });
  const staged = await gitOutput(settings, ["diff", "--cached", "--name-only", "-z"], { dirs });
  if (staged) await gitOutput(settings, ["commit", "-q", "--no-verify", "--no-gpg-sign", "-m", message], { dirs });
  const headSHA = (await gitOutput(settings, ["rev-parse", "HEAD"], { dirs })).trim();
  if (headSHA === baseSHA) return { baseSHA, headSHA, diff: "", files: [] };
  const diff = await gitOutput(settings, ["diff", "--binary", "--full-index", baseSHA, headSHA], { dirs });
  const files = (await gitOutput(settings, ["diff", "--name-only", "-z", baseSHA, headSHA], { dirs })).split("\0").filter(Boolean);
  return { baseSHA, headSHA, diff, files };
}

/** A stored result that is already an envelope for this base (a pass that ran twice) gives back the model's answer. */
export function summaryOf(stored: string | undefined, baseSHA: string): string {
  if (stored === undefined) return "";
  try {
    const parsed = JSON.parse(stored) as Partial<ResultEnvelope>;
    if (parsed?.version === 1 && parsed.baseSHA === baseSHA && typeof parsed.summary === "string") return parsed.summary;
  } catch {
    // Plain text: the model's answer as it gave it.
  }
  return stored;
}

/** The diff inside a stored result envelope, if it is one. */
export function diffOf(stored: string | undefined): string | undefined {
  if (stored === undefined) return undefined;
  try {
    const parsed = JSON.parse(stored) as Partial<ResultEnvelope>;
    return parsed?.version === 1 && typeof parsed.diff === "string" ? parsed.diff : undefined;
  } catch {
    return undefined;
  }
}

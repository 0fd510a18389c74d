import { constants } from "node:fs";
import { lstat, mkdir, open, readlink, realpath, type FileHandle } from "node:fs/promises";
import { isAbsolute, join, posix } from "node:path";
import { OrkaError } from "../../util/errors.ts";

export const ACCESS_DENIED = "access denied: path outside allowed directories";
const MAX_SYMLINK_HOPS = 40;

/** A directory the file tools may reach, as the model names it (`/workspace`) and where it is on the host. */
export interface FileRoot {
  virtual: string;
  host: string;
}

/**
 * The confinement of file_read and file_write: paths resolve component by
 * component inside a root, symlinks are followed only when relative and staying inside, and the
 * opened file is checked again through /proc/self/fd, which closes the check-then-open race.
 */
export class Workspace {
  private readonly roots: FileRoot[];

  constructor(roots: FileRoot[]) {
    this.roots = roots;
  }

  /** Maps a requested path to its root and the components below it; relative paths are under the first root. */
  locate(requested: string): { root: FileRoot; parts: string[] } {
    const path = requested.trim();
    if (!path) throw new OrkaError("invalid_argument", "path is required");
    if (path.includes("\0")) throw new OrkaError("permission_denied", ACCESS_DENIED);
    const absolute = isAbsolute(path) ? path : posix.join(this.roots[0].virtual, path);
    for (const root of this.roots) {
      const parts = relativeParts(root.virtual, absolute);
      if (parts) return { root, parts };
    }
    throw new OrkaError("permission_denied", ACCESS_DENIED);
  }

  /**
   * Resolves existing components (following relative in-root symlinks) and returns the host path
   * of the parent directory plus the remaining, not yet existing components.
   */
  async resolve(requested: string): Promise<{ root: FileRoot; existing: string[]; missing: string[] }> {
    const { root, parts } = this.locate(requested);
    const resolved: string[] = [];
    const pending = [...parts];
    let hops = 0;
    while (pending.length > 0) {
      const part = pending.shift()!;
      if (part === "..") {
        if (resolved.length === 0) throw new OrkaError("permission_denied", ACCESS_DENIED);
        resolved.pop();
        continue;
      }
      const hostPath = join(root.host, ...resolved, part);
      let info;
      try {
        info = await lstat(hostPath);
      } catch {
        const missing = [part, ...pending];
        if (missing.includes("..")) throw new OrkaError("not_found", `file not found: ${requested}`);
        return { root, existing: resolved, missing };
      }
      if (info.isSymbolicLink()) {
        if (++hops > MAX_SYMLINK_HOPS) throw new OrkaError("failed_precondition", "too many symbolic links");
        const target = await readlink(hostPath);
        if (isAbsolute(target)) throw new OrkaError("permission_denied", ACCESS_DENIED);
        pending.unshift(...target.split("/").filter((p) => p && p !== "."));
        continue;
      }
      resolved.push(part);
    }
    return { root, existing: resolved, missing: [] };
  }

  /** Opens an existing file for reading, never following a final symlink, never blocking on a FIFO. */
  async openForRead(requested: string): Promise<FileHandle> {
    const { root, existing, missing } = await this.resolve(requested);
    if (missing.length > 0) throw new OrkaError("not_found", `file not found: ${requested}`);
    return this.checkedOpen(root, join(root.host, ...existing), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  }

  /** The host directory a new or replaced file goes in, created when allowed; plus the final name. */
  async directoryFor(requested: string, createDirs: boolean): Promise<{ root: FileRoot; dir: string; name: string; exists: boolean }> {
    const { root, existing, missing } = await this.resolve(requested);
    if (existing.length === 0 && missing.length === 0) throw new OrkaError("failed_precondition", "path is a directory, not a file");
    const all = [...existing, ...missing];
    const name = all.pop()!;
    const dirParts = all;
    if (missing.length > 1) {
      if (!createDirs) throw new OrkaError("not_found", `directory does not exist: ${posix.dirname(requested)}`);
      for (let i = existing.length; i < dirParts.length; i++) {
        await mkdir(join(root.host, ...dirParts.slice(0, i + 1)), { mode: 0o755 }).catch((err) => {
          if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        });
      }
    }
    const dir = join(root.host, ...dirParts);
    await this.assertInside(root, await realpath(dir));
    if (missing.length === 0 && (await lstat(join(dir, name))).isDirectory()) throw new OrkaError("failed_precondition", "path is a directory, not a file");
    return { root, dir, name, exists: missing.length === 0 };
  }

  async checkedOpen(root: FileRoot, hostPath: string, flags: number, mode?: number): Promise<FileHandle> {
    let handle: FileHandle;
    try {
      handle = await open(hostPath, flags, mode);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ELOOP") throw new OrkaError("permission_denied", ACCESS_DENIED);
      if (code === "ENOENT") throw new OrkaError("not_found", `file not found: ${hostPath.slice(root.host.length) || "/"}`);
      if (code === "EISDIR") throw new OrkaError("failed_precondition", "path is a directory, not a file");
      throw err;
    }
    try {
      await this.assertInside(root, await realpath(`/proc/self/fd/${handle.fd}`));
    } catch (err) {
      await handle.close();
      throw err;
    }
    return handle;
  }

  private async assertInside(root: FileRoot, actual: string): Promise<void> {
    const base = await realpath(root.host);
    if (actual !== base && !actual.startsWith(`${base}/`)) throw new OrkaError("permission_denied", ACCESS_DENIED);
  }
}

/** The components of `path` below `root`, compared component by component (so /workspace2 is outside /workspace). */
function relativeParts(root: string, path: string): string[] | undefined {
  const rootParts = root.split("/").filter(Boolean);
  const parts = path.split("/").filter((p) => p && p !== ".");
  for (let i = 0; i < rootParts.length; i++) if (parts[i] !== rootParts[i]) return undefined;
  return parts.slice(rootParts.length);
}

import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { access, mkdir, rename, unlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "zod";
import { SANDBOX_UID } from "../../sandbox/bwrap.ts";
import { sha256Hex } from "../../util/hash.ts";
import { OrkaError } from "../../util/errors.ts";
import { defineTool, type ToolContext } from "../define.ts";
import { MiB } from "./file-read.ts";

const MAX_APPEND_TOTAL = 64 * MiB;

export const fileWrite = defineTool({
  name: "file_write",
  family: "core",
  offeredOnCompat: true,
  // Writing the same content again is harmless; appending it again is not.
  onResume: (args) => (args.mode === "append" ? "unknown" : "rerun"),
  description: "Write or append a file in the workspace (/workspace, or /tmp); missing directories are created.",
  parameters: z.object({
    path: z.string().describe("File path, relative to /workspace or absolute under /workspace or /tmp"),
    content: z.string().describe("Text to write (at most 1 MiB)"),
    mode: z.string().default("write").describe("write (replace, the default) or append"),
    create_dirs: z.boolean().default(true).describe("Create missing parent directories (default true)"),
  }),
  async run({ path, content, mode, create_dirs: createDirs }, ctx) {
    if (mode !== "write" && mode !== "append") throw new OrkaError("invalid_argument", "mode must be 'write' or 'append'");
    const bytes = Buffer.from(content, "utf8");
    if (bytes.length > MiB) throw new OrkaError("payload_too_large", `content size ${bytes.length} exceeds maximum ${MiB} bytes`);
    const { root, dir, name, exists } = await ctx.workspace.directoryFor(path, createDirs);
    const target = join(dir, name);
    // Sandboxed code runs as nobody when Orka runs as root; it must be able to change these files too.
    const owner = process.getuid?.() === 0 ? SANDBOX_UID : undefined;

    const created = await createdByThisCall(ctx, exists);

    if (mode === "append") {
      const handle = await ctx.workspace.checkedOpen(root, target, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
      try {
        const info = await handle.stat();
        if (!info.isFile()) throw new OrkaError("failed_precondition", "not a regular file");
        if (info.size + bytes.length > MAX_APPEND_TOTAL) throw new OrkaError("resource_exhausted", `append would grow the file past ${MAX_APPEND_TOTAL} bytes`);
        await handle.write(bytes);
        if (owner !== undefined && !exists) await handle.chown(owner, owner);
      } finally {
        await handle.close();
      }
      return { path, size: bytes.length, mode, created };
    }

    // Write a sibling temp file, then rename it over the target: a failed write leaves the old content.
    const temp = join(dir, `.orka-write-${randomBytes(6).toString("hex")}`);
    const handle = await ctx.workspace.checkedOpen(root, temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      await handle.write(bytes);
      if (owner !== undefined) await handle.chown(owner, owner);
    } catch (err) {
      await handle.close();
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    await handle.close();
    await rename(temp, target);
    return { path, size: bytes.length, mode, created };
  },
});

/**
 * Whether this call creates the file. A call run again after its worker was lost finds the file it
 * made itself; a marker under the call's key, beside the attempt's directories and out of the
 * sandbox's sight, keeps the first answer, so the resumed run answers the same.
 */
async function createdByThisCall(ctx: ToolContext, exists: boolean): Promise<boolean> {
  if (!ctx.callKey) return !exists;
  const marker = join(dirname(ctx.workspaceDir), "file-write-created", sha256Hex(ctx.callKey));
  if (exists) return access(marker).then(() => true, () => false);
  await mkdir(dirname(marker), { recursive: true, mode: 0o700 });
  await writeFile(marker, "");
  return true;
}

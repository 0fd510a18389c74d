import { z } from "zod";
import { OrkaError } from "../../util/errors.ts";
import { defineTool } from "../define.ts";

export const MiB = 1024 * 1024;
const DEFAULT_READ_BYTES = 65_536;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Text when the bytes are UTF-8 without NULs (a multi-byte character cut at the end is tolerated); else base64. */
export function encodeContent(bytes: Buffer, cutAtEnd: boolean): { content: string; encoding: "utf-8" | "base64" } {
  if (!bytes.includes(0)) {
    for (let trim = 0; trim <= (cutAtEnd ? 3 : 0) && trim <= bytes.length; trim++) {
      try {
        const text = utf8.decode(bytes.subarray(0, bytes.length - trim));
        return { content: text, encoding: "utf-8" };
      } catch {
        // try without a cut character
      }
    }
  }
  return { content: bytes.toString("base64"), encoding: "base64" };
}

export const fileRead = defineTool({
  name: "file_read",
  family: "core",
  offeredOnCompat: true,
  description: "Read a file from the workspace (/workspace, or /tmp). Binary content comes back base64-encoded.",
  parameters: z.object({
    path: z.string().describe("File path, relative to /workspace or absolute under /workspace or /tmp"),
    offset: z.number().int().default(0).describe("Byte offset to start at"),
    limit: z.number().int().default(DEFAULT_READ_BYTES).describe("Bytes to read (default 65536, at most 1 MiB)"),
  }),
  async run({ path, offset, limit }, ctx) {
    if (offset < 0) throw new OrkaError("invalid_argument", "offset must be non-negative");
    const bytesWanted = limit <= 0 ? DEFAULT_READ_BYTES : Math.min(limit, MiB);
    const handle = await ctx.workspace.openForRead(path);
    try {
      const info = await handle.stat();
      if (info.isDirectory()) throw new OrkaError("failed_precondition", "path is a directory, not a file");
      if (!info.isFile()) throw new OrkaError("failed_precondition", "not a regular file");
      const length = Math.max(0, Math.min(bytesWanted, info.size - offset));
      const buffer = Buffer.alloc(length);
      const { bytesRead } = length > 0 ? await handle.read(buffer, 0, length, offset) : { bytesRead: 0 };
      const truncated = offset + bytesRead < info.size;
      return { ...encodeContent(buffer.subarray(0, bytesRead), truncated), path, size: info.size, truncated };
    } finally {
      await handle.close();
    }
  },
});

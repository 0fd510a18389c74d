import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toolHarness } from "../../helpers/tools.ts";

const DENIED = "access denied: path outside allowed directories";

describe("file_read and file_write", () => {
  let tools: Awaited<ReturnType<typeof toolHarness>>;
  beforeEach(async () => (tools = await toolHarness()));
  afterEach(() => tools.close());

  it("writes, appends and reads back, with nested directories created by default", async () => {
    expect(await tools.call("file_write", { path: "notes/day1.txt", content: "hello" })).toEqual({ path: "notes/day1.txt", size: 5, mode: "write", created: true });
    expect(await tools.call("file_write", { path: "/workspace/notes/day1.txt", content: " world", mode: "append" })).toEqual({ path: "/workspace/notes/day1.txt", size: 6, mode: "append", created: false });
    expect(await tools.call("file_read", { path: "notes/day1.txt" })).toEqual({ content: "hello world", encoding: "utf-8", path: "notes/day1.txt", size: 11, truncated: false });
    expect(await tools.call("file_read", { path: "notes/day1.txt", offset: 6, limit: 3 })).toMatchObject({ content: "wor", truncated: true });
    expect(await tools.call("file_read", { path: "notes/day1.txt", offset: 50 })).toMatchObject({ content: "", truncated: false });
    expect(await tools.call("file_write", { path: "/tmp/scratch.txt", content: "" })).toMatchObject({ size: 0 });
    expect(await tools.call("file_write", { path: "a..b.txt", content: "dots" })).toMatchObject({ size: 4 });
  });

  it("reports whether the call created the file: true for a new one, false for an overwrite or an append", async () => {
    expect(await tools.call("file_write", { path: "log.txt", content: "one\n", mode: "append" })).toEqual({ path: "log.txt", size: 4, mode: "append", created: true });
    expect(await tools.call("file_write", { path: "log.txt", content: "two\n", mode: "append" })).toMatchObject({ created: false });
    expect(await tools.call("file_write", { path: "log.txt", content: "three\n" })).toEqual({ path: "log.txt", size: 6, mode: "write", created: false });
    expect(await tools.call("file_write", { path: "/tmp/new/deep.txt", content: "x" })).toMatchObject({ created: true });
    expect((await tools.call("file_read", { path: "log.txt" })).content).toBe("three\n");
  });

  it("refuses bad arguments with a message naming the argument or path at fault", async () => {
    await expect(tools.call("file_write", { path: "x/y.txt", content: "a", create_dirs: false })).rejects.toThrow("directory does not exist: x");
    await expect(tools.call("file_write", { path: "m.txt", content: "a", mode: "overwrite" })).rejects.toThrow("mode must be 'write' or 'append'");
    expect(existsSync(join(tools.workspaceDir, "m.txt"))).toBe(false);
    await expect(tools.call("file_read", { path: "" })).rejects.toThrow("path is required");
    await expect(tools.call("file_read", { path: "absent.txt" })).rejects.toThrow("file not found: absent.txt");
    // On a file that exists, so only the offset can be what is refused.
    writeFileSync(join(tools.workspaceDir, "m.txt"), "content");
    await expect(tools.call("file_read", { path: "m.txt", offset: -1 })).rejects.toThrow(/^offset must be non-negative$/);
    expect((await tools.call("file_read", { path: "m.txt", offset: 0 })).content).toBe("content");
    await expect(tools.call("file_read", { path: 42 })).rejects.toThrow(/^invalid arguments: path:/);
    mkdirSync(join(tools.workspaceDir, "dir"));
    await expect(tools.call("file_read", { path: "dir" })).rejects.toThrow("path is a directory, not a file");
  });

  it("keeps the old content when a write over 1 MiB is refused", async () => {
    await tools.call("file_write", { path: "keep.txt", content: "original" });
    await expect(tools.call("file_write", { path: "keep.txt", content: "x".repeat(1024 * 1024 + 1) })).rejects.toThrow(
      "content size 1048577 exceeds maximum 1048576 bytes",
    );
    expect((await tools.call("file_read", { path: "keep.txt" })).content).toBe("original");
  });

  it("caps a read at 1 MiB and returns binary content as base64", async () => {
    writeFileSync(join(tools.workspaceDir, "big.txt"), "a".repeat(2 * 1024 * 1024));
    const big = await tools.call("file_read", { path: "big.txt", limit: 5 * 1024 * 1024 });
    expect(big.content.length).toBe(1024 * 1024);
    expect(big.truncated).toBe(true);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    writeFileSync(join(tools.workspaceDir, "pic.png"), png);
    expect(await tools.call("file_read", { path: "pic.png" })).toMatchObject({ encoding: "base64", content: png.toString("base64") });
  });

  it.each(["../../../etc/passwd", "/etc/passwd", "/workspace/../etc/passwd", "/workspace2/x", "/tmpx/y", "../outside.txt"])(
    "refuses the traversal %s for reading and writing, creating nothing",
    async (path) => {
      await expect(tools.call("file_read", { path })).rejects.toThrow(DENIED);
      await expect(tools.call("file_write", { path, content: "pwned" })).rejects.toThrow(DENIED);
    },
  );

  it("refuses symlink escapes, absolute links and escaping intermediate links, leaving outside files unchanged", async () => {
    const outside = join(tmpdir(), `orka-outside-${process.pid}`);
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "secret.txt"), "outside");
    try {
      symlinkSync("/etc", join(tools.workspaceDir, "a"));
      symlinkSync(outside, join(tools.workspaceDir, "abs"));
      symlinkSync("../../../../../../../../" + outside.slice(1), join(tools.workspaceDir, "b"));
      symlinkSync(join(tools.workspaceDir, "inside.txt"), join(tools.workspaceDir, "abs-inside"));
      for (const path of ["a/passwd", "abs/secret.txt", "b/secret.txt", "abs-inside"]) {
        await expect(tools.call("file_read", { path })).rejects.toThrow(/access denied|file not found/);
        await expect(tools.call("file_write", { path, content: "pwned" })).rejects.toThrow(/access denied|file not found/);
      }
      expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("outside");
      // A relative link that stays inside is followed.
      await tools.call("file_write", { path: "real/data.txt", content: "inside" });
      symlinkSync("real", join(tools.workspaceDir, "alias"));
      expect((await tools.call("file_read", { path: "alias/data.txt" })).content).toBe("inside");
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("catches a directory swapped for a symlink between check and open", async () => {
    const outside = join(tmpdir(), `orka-swap-${process.pid}`);
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "f.txt"), "outside");
    try {
      mkdirSync(join(tools.workspaceDir, "d"));
      writeFileSync(join(tools.workspaceDir, "d", "f.txt"), "inside");
      // Resolve the path while it is a real directory, then swap it and open.
      const { Workspace } = await import("../../../src/tools/core/workspace.ts");
      const workspace = new Workspace([{ virtual: "/workspace", host: tools.workspaceDir }]);
      const resolved = await workspace.resolve("d/f.txt");
      rmSync(join(tools.workspaceDir, "d"), { recursive: true });
      symlinkSync(outside, join(tools.workspaceDir, "d"));
      const { constants } = await import("node:fs");
      await expect(workspace.checkedOpen(resolved.root, join(tools.workspaceDir, ...resolved.existing), constants.O_RDONLY)).rejects.toThrow(DENIED);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("answers a FIFO at once instead of hanging", async () => {
    execFileSync("mkfifo", [join(tools.tmpDir, "pipe")]);
    const started = Date.now();
    await expect(tools.call("file_read", { path: "/tmp/pipe" })).rejects.toThrow("not a regular file");
    expect(Date.now() - started).toBeLessThan(1000);
    expect(existsSync(join(tools.tmpDir, "pipe"))).toBe(true);
  });
});

describe("tool result cap", () => {
  it("cuts a result over 2 MiB on a character boundary and says how much was left out", async () => {
    const { capResult, MAX_RESULT_BYTES } = await import("../../../src/worker/tool-executor.ts");
    expect(capResult("small")).toBe("small");
    const text = "é".repeat(MAX_RESULT_BYTES); // 2 bytes each
    const capped = capResult(text);
    expect(capped.endsWith(`\n[tool result truncated: ${MAX_RESULT_BYTES} bytes omitted]`)).toBe(true);
    expect(capped.startsWith("é".repeat(MAX_RESULT_BYTES / 2))).toBe(true);
    expect(capped).not.toContain("\uFFFD");
  });
});

import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OrkaError } from "../../src/util/errors.ts";
import { basicAuth, startGitPeer, type GitPeer } from "./git-server.ts";
import { git, runGit } from "./git/run-git.ts";

const REPO = "octo/widgets";

// The peer is git's own server: the real git CLI clones and pushes through it, and it refuses by token.
describe("git peer through the real git CLI", () => {
  let peer: GitPeer;
  let work: string;
  let clones = 0;

  beforeAll(async () => {
    peer = await startGitPeer();
    work = await mkdtemp(path.join(os.tmpdir(), "orka-git-client-"));
    peer.addToken("tok-read", "reader", { [REPO]: "read" });
    peer.addToken("tok-write", "writer", { [REPO]: "write" });
    await peer.createRepo(REPO, { files: { "README.md": "# widgets\n", "src/a.txt": "a\n" } });
  });
  afterAll(async () => {
    await peer.close();
    await rm(work, { recursive: true, force: true });
  });

  async function clone(token: string | undefined, url = `https://github.com/${REPO}`) {
    const dir = path.join(work, `clone-${++clones}`);
    const run = await runGit(["clone", "--quiet", url, dir], { env: peer.clientEnv(token) });
    return { dir, run };
  }

  async function commitIn(dir: string, file: string, content: string): Promise<string> {
    await writeFile(path.join(dir, file), content);
    await git(["add", file], { cwd: dir });
    await git(["commit", "--quiet", "-m", `Write ${file}`], { cwd: dir, env: peer.clientEnv() });
    return git(["rev-parse", "HEAD"], { cwd: dir });
  }

  function since(mark: number) {
    return peer.requests.slice(mark);
  }

  it("clones with a read token through https://github.com/o/r, and no token lands in .git/config", async () => {
    const mark = peer.requests.length;
    const { dir, run } = await clone("tok-read");
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(path.join(dir, "src/a.txt"), "utf8")).toBe("a\n");
    expect(await git(["rev-parse", "HEAD"], { cwd: dir })).toBe(await peer.refSha(REPO, "main"));
    const config = await readFile(path.join(dir, ".git/config"), "utf8");
    expect(config).toContain(`url = https://github.com/${REPO}`);
    expect(config).not.toMatch(/tok-read|extraheader|authorization|127\.0\.0\.1/i);
    const requests = since(mark);
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((r) => r.service === "git-upload-pack" && r.identity === "reader" && r.status === 200)).toBe(true);
  });

  it("pushes with a write token and the server's branch moves", async () => {
    const { dir } = await clone("tok-write", `https://github.com/${REPO}.git`);
    const head = await commitIn(dir, "b.txt", "b\n");
    const run = await runGit(["push", "--quiet", "origin", "HEAD:refs/heads/feature"], { cwd: dir, env: peer.clientEnv("tok-write") });
    expect(run.code, run.stderr).toBe(0);
    expect(await peer.refSha(REPO, "refs/heads/feature")).toBe(head);
    expect(peer.requests.filter((r) => r.service === "git-receive-pack").every((r) => r.identity === "writer" && r.status === 200)).toBe(true);
  });

  it("refuses a push with a read-only token: git fails, the branch stays, the log shows the 403", async () => {
    const { dir } = await clone("tok-read");
    const before = await peer.refSha(REPO, "main");
    await commitIn(dir, "c.txt", "c\n");
    const mark = peer.requests.length;
    const run = await runGit(["push", "--quiet", "origin", "HEAD:main"], { cwd: dir, env: peer.clientEnv("tok-read") });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/403/);
    expect(await peer.refSha(REPO, "main")).toBe(before);
    expect(since(mark)).toEqual([expect.objectContaining({ method: "GET", service: "git-receive-pack", identity: "reader", status: 403 })]);
  });

  it("refuses the receive-pack POST itself to a read-only token, not only the advertisement", async () => {
    const status = await post(`${peer.url}/${REPO}.git/git-receive-pack`, basicAuth("tok-read"), Buffer.from("0000"));
    expect(status).toBe(403);
  });

  it("refuses a clone without credentials or with an unknown token, with a Basic challenge", async () => {
    const mark = peer.requests.length;
    expect((await clone(undefined)).run.code).not.toBe(0);
    expect((await clone("tok-nobody")).run.code).not.toBe(0);
    expect(since(mark).map((r) => [r.identity, r.status])).toEqual([
      ["anonymous", 401],
      ["unknown", 401],
    ]);
    const challenge = await fetch(`${peer.url}/${REPO}.git/info/refs?service=git-upload-pack`);
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get("www-authenticate")).toMatch(/^Basic /);
  });

  it("accepts any username with the token as password, and hides repositories the token has no grant on", async () => {
    const ok = await fetch(`${peer.url}/${REPO}/info/refs?service=git-upload-pack`, { headers: { authorization: basicAuth("tok-read", "someone") } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("application/x-git-upload-pack-advertisement");
    await ok.arrayBuffer();
    await peer.createRepo("octo/secret");
    expect((await fetch(`${peer.url}/octo/secret.git/info/refs?service=git-upload-pack`, { headers: { authorization: basicAuth("tok-read") } })).status).toBe(404);
  });

  it("serves a gzip-encoded request body, as git sends a large negotiation", async () => {
    const head = (await peer.refSha(REPO, "main"))!;
    const negotiation = Buffer.from(`0032want ${head}\n00000009done\n`);
    const res = await fetch(`${peer.url}/${REPO}.git/git-upload-pack`, {
      method: "POST",
      headers: { authorization: basicAuth("tok-read"), "content-type": "application/x-git-upload-pack-request", "content-encoding": "gzip" },
      body: gzipSync(negotiation),
    });
    expect(res.status).toBe(200);
    const answer = Buffer.from(await res.arrayBuffer());
    expect(answer.subarray(0, 8).toString()).toBe("0008NAK\n");
    expect(answer.includes("PACK")).toBe(true);
  });

  it("refuses a body over the bound with 413 and stops its git process", async () => {
    const small = await startGitPeer({ maxBodyBytes: 2048 });
    try {
      small.addToken("tok-write", "writer", { [REPO]: "write" });
      await small.createRepo(REPO, { files: { "README.md": "x\n" } });
      const dir = path.join(work, "bounded");
      await git(["clone", "--quiet", `https://github.com/${REPO}`, dir], { env: small.clientEnv("tok-write") });
      await writeFile(path.join(dir, "big.bin"), randomBytes(16 * 1024));
      await git(["add", "big.bin"], { cwd: dir });
      await git(["commit", "--quiet", "-m", "Big"], { cwd: dir, env: small.clientEnv() });
      const run = await runGit(["push", "--quiet", "origin", "HEAD:main"], { cwd: dir, env: small.clientEnv("tok-write") });
      expect(run.code).not.toBe(0);
      expect(small.requests.at(-1)).toMatchObject({ method: "POST", service: "git-receive-pack", status: 413 });
      // A chunked body has no length to refuse up front: the bound stops it while it streams.
      const chunked = await fetch(`${small.url}/${REPO}.git/git-receive-pack`, {
        method: "POST",
        headers: { authorization: basicAuth("tok-write"), "content-type": "application/x-git-receive-pack-request" },
        body: new Blob([randomBytes(8 * 1024)]).stream(),
        duplex: "half",
      } as RequestInit);
      expect(chunked.status).toBe(413);
      await expect.poll(() => small.runningBackends(), { timeout: 5_000 }).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it("follows a branch rewritten server-side, as a force-push by someone else", async () => {
    const first = await peer.refSha(REPO, "main");
    const added = await peer.commit(REPO, "main", { files: { "d.txt": "d\n" } });
    const rewritten = await peer.commit(REPO, "main", { files: { "e.txt": "e\n" }, parent: first });
    expect(rewritten).not.toBe(added);
    expect(await peer.refSha(REPO, "main")).toBe(rewritten);
    const listed = await git(["ls-remote", `https://github.com/${REPO}`, "refs/heads/main"], { env: peer.clientEnv("tok-read") });
    expect(listed.split("\t")[0]).toBe(rewritten);
  });

  it("stops the git process of a client that goes away", async () => {
    const pid = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${peer.url}/${REPO}.git/git-upload-pack`, {
        method: "POST",
        headers: { authorization: basicAuth("tok-read"), "content-type": "application/x-git-upload-pack-request", "transfer-encoding": "chunked" },
      });
      req.on("error", () => undefined);
      req.write("0032want 0000000000000000000000000000000000000000\n");
      const started = Date.now();
      const poll = setInterval(() => {
        const [running] = peer.runningBackends();
        if (running !== undefined) {
          clearInterval(poll);
          req.destroy();
          resolve(running);
        } else if (Date.now() - started > 5_000) {
          clearInterval(poll);
          reject(new OrkaError("deadline_exceeded", "no git http-backend started within 5 s"));
        }
      }, 20);
    });
    await expect.poll(() => groupAlive(pid), { timeout: 5_000, interval: 50 }).toBe(false);
    expect(peer.runningBackends()).toEqual([]);
  });
});

function post(url: string, authorization: string, body: Buffer): Promise<number> {
  return fetch(url, { method: "POST", headers: { authorization, "content-type": "application/x-git-receive-pack-request" }, body }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });
}

/** Whether any process of the group `leader` leads (http-backend and the git it started) is still there. */
function groupAlive(leader: number): boolean {
  try {
    process.kill(-leader, 0);
    return true;
  } catch {
    return false;
  }
}

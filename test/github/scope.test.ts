import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GrantGate } from "../../src/auth/grant-gate.ts";
import { parentLink } from "../../src/resources/parent-link.ts";
import { CREDENTIALS_SCOPE } from "../../src/auth/grants.ts";
import type { TransactionClaims } from "../../src/auth/transaction-token.ts";
import { readCredential, resolveGithubTarget, type ScopeArgs } from "../../src/github/scope.ts";
import { githubSettings } from "../../src/github/settings.ts";
import type { Task, TaskSpec } from "../../src/resources/task.ts";
import { tempStore } from "../helpers/store.ts";

const NS = "default";

function claims(context: Record<string, string>, scopes = [CREDENTIALS_SCOPE]): TransactionClaims {
  return {
    profile: "transaction-token", id: "txn-1", issuer: "https://issuer.test", audience: "orka", subject: "alice", requestingWorkload: "ci",
    scope: scopes.join(" "), scopes, context: { namespace: NS, ...context }, contextDigest: "sha256:0",
  };
}

// Scope and credential resolution against a real store: each refusal is checked to come before the Secret
// is read (the Secrets the refused calls name do not exist, so reading one would fail differently).
describe("GitHub scope and credentials", () => {
  const store = tempStore();
  const grants = new GrantGate({ mode: "enforce", scopeOverrides: {} }, { record: () => undefined, recent: () => [] }, pino({ level: "silent" }));
  const settings = githubSettings({});
  const deps = { store: store.resources, grants, settings, site: "/test" };
  const withFallback = { ...deps, settings: githubSettings({ token: "operator-token" }) };

  const secret = (name: string, data: Record<string, string>) =>
    store.resources.create({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace: NS }, spec: { type: "Opaque", data } });
  const task = async (name: string, spec: Partial<TaskSpec>, parent?: Task): Promise<Task> =>
    (await store.resources.create({
      apiVersion: "core.orka.ai/v1alpha1", kind: "Task", metadata: { name, namespace: NS, ...(parent ? parentLink(parent, NS) : {}) },
      spec: { type: "ai", prompt: "p", ...spec } as TaskSpec,
    })) as Task;

  let boss: Task;
  const resolve = (caller: Task, args: ScopeArgs, access: "read" | "write" = "read", d = deps) => resolveGithubTarget(d, caller, args, access);

  beforeAll(async () => {
    await secret("read", { token: "read-token" });
    await secret("pub-read", { token: "pub-read-token" });
    await secret("forge", { token: " forge-token\n" });
    boss = await task("boss", {
      workspace: {
        intent: "write", gitRepo: "https://github.com/acme/widgets", readCredentialRef: "read", publicationGitRepo: "https://github.com/fork/widgets",
        publicationReadCredentialRef: "pub-read", publicationCredentialRef: "push", forgeCredentialRef: "forge",
      },
    });
    await task("child", { workspace: { gitRepo: "https://github.com/acme/child-repo", readCredentialRef: "read" } }, boss);
    await task("stranger", { workspace: { gitRepo: "https://github.com/acme/child-repo", readCredentialRef: "read" } });
  });
  afterAll(() => store.close());

  it("lends the operator's GITHUB_TOKEN to Tasks people created and to Tasks under a transaction, never to a child a model delegated", async () => {
    const plain = await task("plain", { workspace: { gitRepo: "https://github.com/acme/anything" } });
    expect(await resolve(plain, {}, "read", withFallback)).toMatchObject({ repo: "anything", token: "operator-token" });
    const delegated = await task("delegated", { workspace: { gitRepo: "https://github.com/acme/private-secrets" } }, plain);
    await expect(resolve(plain, { task_name: "delegated" }, "read", withFallback)).rejects.toThrow("could not resolve GitHub token");
    await expect(resolve(delegated, {}, "read", withFallback)).rejects.toThrow("could not resolve GitHub token");
    const pinned = await task("pinned-child", { transaction: claims({ repo: "https://github.com/acme/anything" }) }, plain);
    expect(await resolve(pinned, {}, "read", withFallback)).toMatchObject({ repo: "anything", token: "operator-token" });
  });

  it("uses the first scope when no repo_url is given, and the matched scope's read credential", async () => {
    expect(await resolve(boss, {})).toMatchObject({ owner: "acme", repo: "widgets", token: "read-token" });
    expect(await resolve(boss, { repo_url: "https://github.com/FORK/Widgets.git" })).toMatchObject({ owner: "fork", repo: "widgets", token: "pub-read-token" });
  });

  it("writes with the forge credential only, whichever scope matched", async () => {
    expect(await resolve(boss, { repo_url: "git@github.com:fork/widgets.git" }, "write")).toMatchObject({ owner: "fork", token: "forge-token" });
    const child = await store.resources.get<TaskSpec, never>("Task", NS, "child");
    await expect(resolve(child as Task, {}, "write", withFallback)).rejects.toThrow("task child workspace has no forgeCredentialRef configured");
  });

  it("refuses a repository outside every scope, naming the permitted ones", async () => {
    await expect(resolve(boss, { repo_url: "https://github.com/acme/other" })).rejects.toThrow(
      "repo_url repository acme/other does not match permitted repository scope task workspace=acme/widgets, task publication workspace=fork/widgets",
    );
    const bare = await task("bare", {});
    await expect(resolve(bare, { repo_url: "https://github.com/acme/other" })).rejects.toThrow("repo_url repository acme/other requires a permitted repository scope");
    await expect(resolve(bare, {})).rejects.toThrow("task bare does not have workspace configuration");
    const gitlab = await task("gitlab", { workspace: { gitRepo: "https://gitlab.com/acme/widgets", readCredentialRef: "absent" } });
    await expect(resolve(gitlab, {})).rejects.toThrow("task workspace repository gitlab.com/acme/widgets is not on a GitHub host this server calls (github.com)");
    const noRepo = await task("no-repo", { workspace: { intent: "read" } });
    await expect(resolve(noRepo, {})).rejects.toThrow("task no-repo workspace has no gitRepo configured");
  });

  it("reads the scope from a child by its protected parent link, and from no other Task", async () => {
    expect(await resolve(boss, { task_name: "child" })).toMatchObject({ owner: "acme", repo: "child-repo", token: "read-token" });
    await expect(resolve(boss, { task_name: "stranger" })).rejects.toThrow("task stranger is not the current task or one of its children");
    await expect(resolve(boss, { task_name: "ghost" })).rejects.toThrow("failed to get task ghost: not found");
    // The URL is checked first: a bad one fails before any Task is read.
    await expect(resolve(boss, { task_name: "ghost", repo_url: "https://evil.example/acme/widgets" })).rejects.toThrow("unsupported GitHub URL format");
  });

  it("falls back to the operator's GITHUB_TOKEN for reads without a read credential, never for writes", async () => {
    const tokenless = await task("tokenless", { workspace: { gitRepo: "https://github.com/acme/widgets" } });
    expect(await resolve(tokenless, {}, "read", withFallback)).toMatchObject({ token: "operator-token" });
    await expect(resolve(tokenless, {})).rejects.toThrow(
      "could not resolve GitHub token from task secret, /secrets/git/token, /secrets/git/password, or GITHUB_TOKEN",
    );
    await expect(resolve(tokenless, {}, "write", withFallback)).rejects.toThrow("task tokenless workspace has no forgeCredentialRef configured");
  });

  it("grants scope through a signed transaction's repo context", async () => {
    const txn = await task("txn", { transaction: claims({ repo: "https://github.com/acme/from-token" }) });
    expect(await resolve(txn, { repo_url: "https://github.com/Acme/From-Token" }, "read", withFallback)).toMatchObject({ owner: "acme", repo: "from-token", token: "operator-token" });
    await expect(resolve(txn, { repo_url: "https://github.com/acme/widgets" }, "read", withFallback)).rejects.toThrow(
      "does not match permitted repository scope transaction repo context=acme/from-token",
    );
  });

  it("uses a Secret only when the caller's transaction allows it, before reading it", async () => {
    const workspace = { gitRepo: "https://github.com/acme/widgets", readCredentialRef: "absent-secret" };
    const refused = await task("txn-refused", { workspace, transaction: claims({ secret: "another" }) });
    await expect(resolve(refused, {})).rejects.toThrow(
      `not authorized to read git secret default/absent-secret: the task's transaction needs the ${CREDENTIALS_SCOPE} scope and tctx.secret naming this Secret`,
    );
    const unscoped = await task("txn-unscoped", { workspace, transaction: claims({ secret: "absent-secret" }, []) });
    await expect(resolve(unscoped, {})).rejects.toThrow("not authorized to read git secret default/absent-secret");
    const allowed = await task("txn-allowed", { workspace, transaction: claims({ secret: "absent-secret" }) });
    await expect(resolve(allowed, {})).rejects.toThrow("failed to get git secret absent-secret");
  });

  it("reads the configured key only, trimmed, never a sibling key", async () => {
    await secret("keyed", { token: "default-key", " pat ": "unused", pat: "custom-key" });
    await secret("password-only", { password: "sibling", GITHUB_TOKEN: "sibling-too" });
    await secret("blank", { token: "  \n", other: "x" });
    expect(await readCredential(store.resources, NS, { name: "keyed", key: " pat " }, "git")).toBe("custom-key");
    expect(await readCredential(store.resources, NS, { name: "keyed" }, "git")).toBe("default-key");
    await expect(readCredential(store.resources, NS, { name: "password-only" }, "git")).rejects.toThrow('git secret password-only does not contain configured key "token"');
    await expect(readCredential(store.resources, NS, { name: "keyed", key: "missing" }, "forge credential")).rejects.toThrow(
      'forge credential secret keyed does not contain configured key "missing"',
    );
    await expect(readCredential(store.resources, NS, { name: "blank" }, "forge credential")).rejects.toThrow('forge credential secret blank contains an empty configured key "token"');
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/store/data-store.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { RunningOrka } from "../../src/server.ts";
import { startEmbeddedOrka } from "../helpers/embedded.ts";
import { startTokenIssuer, type TokenIssuer } from "../peers/token-issuer.ts";

const YEARLY = "0 0 1 1 *";

// create_pr_monitor under a transaction grant, called on the control plane as a worker would: the grant
// is settled on the drafted monitor before any Secret is looked up, so a refusal says nothing about Secrets.
describe("create_pr_monitor under a transaction grant", () => {
  let orka: RunningOrka;
  let issuer: TokenIssuer;
  let taskCount = 0;

  const callerWith = async (name: string, context: Record<string, string>) => {
    const transaction = {
      profile: "transaction-token" as const,
      id: `txn-${name}`,
      issuer: issuer.url,
      audience: issuer.audience,
      subject: "ci",
      requestingWorkload: "ci",
      scope: "orka:secrets:credentials:read",
      scopes: ["orka:secrets:credentials:read"],
      contextDigest: "d",
      context: { namespace: "default", ...context },
    };
    const created = await orka.store.create({
      apiVersion: API_VERSION,
      kind: "Task",
      metadata: { name, namespace: "default" },
      // A yearly schedule keeps the controller from running the caller; only this test's attempt acts.
      spec: { type: "ai", prompt: "x", priority: 500, schedule: YEARLY, transaction },
    });
    orka.data.createAttempt({ id: `${name}-1`, namespace: "default", task: name, taskUid: created.metadata.uid!, number: 1, allowedTools: ["create_pr_monitor"] }, hashToken(`token-of-${name}`));
    return async (body: object, idempotencyKey?: string) => {
      const response = await fetch(`${orka.url}/internal/v1/tasks/default/${name}/pr-monitors`, {
        method: "POST",
        headers: { authorization: `Bearer token-of-${name}`, "content-type": "application/json", ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}) },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      return (await response.json()) as any;
    };
  };
  const monitors = async () => (await orka.store.list("Task", { namespace: "default" })).items.filter((t) => t.metadata.annotations?.["orka.ai/pr-monitor-name"]);
  const args = (extra: object = {}) => ({ name: "m", repo_url: "https://github.com/o/r", schedule: YEARLY, agent_ref: "reviewer", ...extra });

  beforeAll(async () => {
    issuer = await startTokenIssuer();
    orka = await startEmbeddedOrka({}, { ORKA_TXN_TOKEN_ISSUER: issuer.url, ORKA_TXN_TOKEN_AUDIENCE: issuer.audience, ORKA_TXN_TOKEN_MODE: "enforce" });
    for (const name of ["reviewer", "other"]) {
      await orka.store.create({ apiVersion: API_VERSION, kind: "Agent", metadata: { name, namespace: "default" }, spec: { coordination: { enabled: true } } });
    }
    await orka.store.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "gh-read", namespace: "default" }, spec: { type: "Opaque", data: { token: "ghp_grantread000000000000000000000000" } } });
    taskCount = (await orka.store.list("Task")).items.length;
  });
  afterAll(async () => {
    await orka.close();
    await issuer.close();
  });

  it("refuses an Agent or a repository outside the grant the same way whether the named Secret exists or not", async () => {
    const call = await callerWith("only-other", { agent: "other" });
    const present = await call(args({ gitSecretRef: "gh-read" }));
    const absent = await call(args({ gitSecretRef: "no-such-secret" }));
    expect(present).toMatchObject({ success: false, errorType: "authorization_failed", error: 'agent "reviewer" is not "other"' });
    expect(absent).toEqual(present);

    const pinned = await callerWith("pinned-repo", { repo: "https://github.com/o/allowed", secret: "gh-read" });
    const refused = [await pinned(args({ gitSecretRef: "gh-read" })), await pinned(args({ gitSecretRef: "no-such-secret" }))];
    expect(refused[0]).toMatchObject({ success: false, errorType: "authorization_failed", error: 'workspace repository must be "https://github.com/o/allowed"' });
    expect(refused[1]).toEqual(refused[0]);
  });

  it("creates the monitor with the Secret the grant names, and refuses another at creation", async () => {
    const call = await callerWith("allowed", { agent: "reviewer", secret: "gh-read" });
    const key = "a".repeat(64);
    const created = await call(args({ name: "granted", gitSecretRef: "gh-read" }), key);
    expect(created).toMatchObject({ success: true, data: { monitor_name: "granted", warning: "reviews cannot be posted: no forge credential" } });
    // The same tool call again (a resumed attempt) is answered from the effect ledger: no second monitor.
    expect(await call(args({ name: "granted", gitSecretRef: "gh-read" }), key)).toEqual(created);
    const task = await orka.store.get<any, unknown>("Task", "default", created.data.name);
    // The monitor carries its creator's grant, so each of its runs is held to it too.
    expect(task!.spec.transaction).toMatchObject({ id: "txn-allowed", context: { secret: "gh-read" } });

    // A default Secret the grant does not name is refused: creation checks the whole Task again.
    await orka.store.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "git-credentials", namespace: "default" }, spec: { type: "Opaque", data: { token: "ghp_grantdefault0000000000000000000000" } } });
    const other = await call(args({ name: "default secret" }));
    expect(other).toMatchObject({ success: false, errorType: "authorization_failed", error: 'secret "git-credentials" is not the token context\'s secret' });
    expect((await monitors()).map((t) => t.metadata.annotations!["orka.ai/pr-monitor-name"]).sort()).toEqual(["granted"]);
    expect((await orka.store.list("Task")).items.length).toBe(taskCount + 3 + 1); // three callers, one monitor
  });
});

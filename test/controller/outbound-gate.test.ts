import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { TaskContext } from "../../src/controller/task/context.ts";
import { openPublicationPullRequest } from "../../src/controller/task/pull-request.ts";
import { deliverWebhook } from "../../src/controller/webhooks.ts";
import { githubSettings } from "../../src/github/settings.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { Task } from "../../src/resources/task.ts";
import { HeldGate } from "../helpers/held-gate.ts";

describe("the controller's calls to other services", () => {
  let receiver: http.Server | undefined;
  afterEach(() => new Promise<void>((closed) => (receiver ? receiver.close(() => closed()) : closed())));

  it("posts a Task's webhook only once the Task's end it tells of is committed", async () => {
    const posted: string[] = [];
    receiver = http.createServer((req, res) => {
      req.resume().on("end", () => {
        posted.push(req.headers["x-orka-task"] as string);
        res.end();
      });
    });
    await new Promise<void>((listening) => receiver!.listen(0, "127.0.0.1", listening));
    const gate = new HeldGate();
    const ctx = { gate, egress: { allowLoopback: true } } as unknown as TaskContext;
    const task = {
      apiVersion: API_VERSION,
      kind: "Task",
      metadata: { name: "ended", namespace: "default" },
      spec: { type: "container", command: ["true"], webhookURL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` },
      status: { phase: "Succeeded" },
    } as Task;

    gate.close(); // the Task's end is written, not yet committed
    const delivered = deliverWebhook(ctx, task);
    await sleep(300);
    expect(posted).toEqual([]);
    gate.open();
    expect((await delivered).status).toEqual({ webhookDelivered: true });
    expect(posted).toEqual(["ended"]);
  });
  it("opens a verified publication's pull request only once what it is opened for is committed: not even its credential is read before", async () => {
    const gate = new HeldGate();
    const read: string[] = [];
    const store = { get: async (kind: string, _namespace: string, name: string) => (read.push(`${kind}/${name}`), undefined) };
    const ctx = { gate, store, github: githubSettings({}) } as unknown as TaskContext;
    const task = {
      apiVersion: API_VERSION,
      kind: "Task",
      metadata: { name: "published", namespace: "default" },
      spec: { type: "ai", prompt: "go", workspace: { intent: "write", gitRepo: "https://github.com/o/r", createPR: true, forgeCredentialRef: "forge", prBaseBranch: "main" } },
      status: { phase: "Running", delivery: { outcome: "VerifiedExact", branch: "orka/published", publicationRepository: "https://github.com/o/r" } },
    } as unknown as Task;

    gate.close(); // the verified publication is written, not yet committed
    const opening = openPublicationPullRequest(ctx, task);
    await sleep(300);
    expect(read).toEqual([]);
    gate.open();
    // No such Secret here: the pull request cannot be opened, and the delivery says so.
    expect((await opening).status?.delivery).toMatchObject({ reason: "PullRequestFailed" });
    expect(read).toEqual(["Secret/forge"]);
  });
});

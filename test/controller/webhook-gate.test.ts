import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { TaskContext } from "../../src/controller/task/context.ts";
import { deliverWebhook } from "../../src/controller/webhooks.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { Task } from "../../src/resources/task.ts";
import { HeldGate } from "../helpers/held-gate.ts";

describe("a Task's webhook", () => {
  let receiver: http.Server | undefined;
  afterEach(() => new Promise<void>((closed) => (receiver ? receiver.close(() => closed()) : closed())));

  it("is posted only once the Task's end it tells of is committed", async () => {
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
});

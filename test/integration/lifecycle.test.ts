import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processesMatching, startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

// The lifecycle of container Tasks, run in the bubblewrap sandbox by a real server.
describe("container Task lifecycle in the bubblewrap sandbox", () => {
  let orka: OrkaUnderTest;
  const workDir = join(tmpdir(), `orka-lifecycle-work-${process.pid}`);
  beforeAll(async () => (orka = await startOrkaServer({ ORKA_WORK_DIR: workDir })));
  afterAll(() => orka.stop());

  it("runs an echo container to Succeeded and returns its text", async () => {
    await orka.api("POST", "/api/v1/tasks", { name: "echo", type: "container", command: ["sh", "-c", "echo hello from the sandbox; id -u"] });
    const task = await orka.waitFor("echo");
    expect(task.status).toMatchObject({ phase: "Succeeded", message: "task completed successfully", attempts: 1, resultRef: { available: true } });
    expect(task.status.conditions.find((c: any) => c.type === "Complete")).toMatchObject({ status: "True", reason: "TaskSucceeded" });
    const { body } = await orka.api("GET", "/api/v1/tasks/echo/result");
    expect(body.result).toContain("hello from the sandbox");
    const logs = await orka.cli(["task", "logs", "echo"]);
    expect(logs.stdout).toContain("hello from the sandbox");
  });

  it("answers a create with the Task already Pending and its cleanup finalizer; its history opens with one TaskCreated", async () => {
    const { status, body: created } = await orka.api("POST", "/api/v1/tasks", { name: "pending-at-once", type: "container", command: ["true"] });
    expect(status).toBe(201);
    expect(created.status).toMatchObject({ phase: "Pending", attempts: 0, queuedAt: expect.any(String) });
    expect(created.metadata.finalizers).toEqual(["orka.ai/cleanup"]);
    await orka.waitFor("pending-at-once");
    const events: { type: string }[] = (await orka.api("GET", "/api/v1/tasks/pending-at-once/events")).body.events;
    expect(events[0].type).toBe("TaskCreated");
    expect(events.filter((e) => e.type === "TaskCreated")).toHaveLength(1);
    expect(events.map((e) => e.type)).toContain("AttemptStarted");
  });

  it("gives a failing command with maxRetries 2 three attempts, then Failed with the exit code", async () => {
    await orka.api("POST", "/api/v1/tasks", {
      name: "flaky",
      type: "container",
      command: ["sh", "-c", "echo trying; exit 3"],
      retryPolicy: { maxRetries: 2, initialDelay: "100ms", backoffMultiplier: 2 },
    });
    const task = await orka.waitFor("flaky");
    expect(task.status).toMatchObject({ phase: "Failed", attempts: 3, message: "job failed: container exited with code 3 (reason=Error)" });
    const events = (await orka.api("GET", "/api/v1/tasks/flaky/events?type=TaskRetrying")).body.events;
    expect(events).toHaveLength(2);
    const wait = await orka.cli(["task", "wait", "flaky", "--timeout", "5s"]);
    expect(wait.code).toBe(1);
  });

  it("kills a command that outlives its timeout: 'task timed out' and no process left", async () => {
    const marker = `${30 + Math.random()}`.slice(0, 8);
    await orka.api("POST", "/api/v1/tasks", { name: "sleepy", type: "container", command: ["sleep", marker], timeout: "2s" });
    await orka.waitFor("sleepy", ["Running"]);
    for (let i = 0; i < 50 && processesMatching(`sleep\0${marker}`).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(processesMatching(`sleep\0${marker}`).length).toBeGreaterThan(0);
    const task = await orka.waitFor("sleepy", ["Failed"], 10_000);
    expect(task.status.message).toBe("task timed out");
    for (let i = 0; i < 50 && processesMatching(`sleep\0${marker}`).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(processesMatching(`sleep\0${marker}`)).toEqual([]);
  });

  it("keeps the sandbox off the network and away from Orka's data", async () => {
    await orka.api("POST", "/api/v1/tasks", {
      name: "nosy",
      type: "container",
      command: ["sh", "-c", `cat ${orka.dataDir}/state/secret.key 2>&1; ls /root 2>&1; (exec 3<>/dev/tcp/127.0.0.1/1) 2>&1 || true; cat /sys/class/net/*/address 2>/dev/null | wc -l`],
    });
    const task = await orka.waitFor("nosy");
    const { result } = (await orka.api("GET", "/api/v1/tasks/nosy/result")).body;
    expect(task.status.phase).toBe("Succeeded");
    expect(result).toMatch(/No such file or directory/);
    expect(result).not.toMatch(/[A-Za-z0-9+/]{40,}=/);
  });

  it("sets the worker identity itself and uploads files left in $ORKA_ARTIFACTS_DIR", async () => {
    await orka.api("POST", "/api/v1/tasks", {
      name: "identity",
      type: "container",
      command: ["sh", "-c", 'echo "name=$ORKA_TASK_NAME token=${ORKA_WORKER_TOKEN:-none}"; printf report > "$ORKA_ARTIFACTS_DIR/report.txt"'],
      env: [{ name: "ORKA_TASK_NAME", value: "impostor" }, { name: "GREETING", value: "hi" }],
    });
    await orka.waitFor("identity");
    expect((await orka.api("GET", "/api/v1/tasks/identity/result")).body.result.trim()).toBe("name=identity token=none");
    expect((await orka.api("GET", "/api/v1/tasks/identity/artifacts")).body.items).toMatchObject([{ file: "report.txt", size: 6 }]);
    const download = await fetch(`${orka.url}/api/v1/tasks/identity/artifacts/report.txt`, { headers: { authorization: `Bearer ${orka.token}` } });
    expect(await download.text()).toBe("report");
    expect((await orka.cli(["task", "artifacts", "identity"])).stdout.trim()).toBe("report.txt\t6");
  });

  it("refuses an artifact that is a link: the worker never follows it to a file of the host", async () => {
    const secretKey = `${orka.dataDir}/secret.key`;
    await orka.api("POST", "/api/v1/tasks", {
      name: "linked-artifact",
      type: "container",
      command: ["sh", "-c", `ln -s ${secretKey} "$ORKA_ARTIFACTS_DIR/key.txt"; ln -s /etc/hostname "$ORKA_ARTIFACTS_DIR/host.txt"; printf fine > "$ORKA_ARTIFACTS_DIR/fine.txt"`],
    });
    await orka.waitFor("linked-artifact");
    expect((await orka.api("GET", "/api/v1/tasks/linked-artifact/artifacts")).body.items.map((item: { file: string }) => item.file)).toEqual(["fine.txt"]);
    const events = (await orka.api("GET", "/api/v1/tasks/linked-artifact/events")).body.events.filter((event: { type: string }) => event.type === "ArtifactUploadFailed");
    expect(events.map((event: { summary: string }) => event.summary).sort()).toEqual([
      "artifact host.txt not uploaded: it is a symbolic link; artifacts must be regular files",
      "artifact key.txt not uploaded: it is a symbolic link; artifacts must be regular files",
    ]);
  });

  it("follows logs over SSE until the Task ends", async () => {
    await orka.api("POST", "/api/v1/tasks", { name: "chatty", type: "container", command: ["sh", "-c", "echo one; sleep 1; echo two"] });
    await orka.waitFor("chatty", ["Running", "Succeeded"]);
    const followed = await orka.cli(["task", "logs", "chatty", "-f"]);
    expect(followed.code).toBe(0);
    expect(followed.stdout).toBe("one\ntwo\n");
  });

  it("fails a Task that names an image when no container runtime is configured", async () => {
    await orka.api("POST", "/api/v1/tasks", { name: "imaged", type: "container", image: "alpine:3", command: ["true"] });
    expect((await orka.waitFor("imaged")).status).toMatchObject({ phase: "Failed", message: "container runtime not available" });
  });

  it("cancels a running Task through the completion path", async () => {
    await orka.api("POST", "/api/v1/tasks", { name: "long", type: "container", command: ["sleep", "60"] });
    await orka.waitFor("long", ["Running"]);
    const cancelled = await orka.cli(["task", "cancel", "long", "--reason", "not needed"]);
    expect(cancelled.stdout.trim()).toBe("task/long Cancelled");
    const task = await orka.waitFor("long");
    expect(task.status.phase).toBe("Cancelled");
    expect(task.status.conditions.find((c: any) => c.type === "Complete").reason).toBe("TaskCancelled");
  });

  it("deletes a Task with its data", async () => {
    await orka.api("POST", "/api/v1/tasks", { name: "doomed", type: "container", command: ["echo", "bye"] });
    await orka.waitFor("doomed");
    expect((await orka.api("DELETE", "/api/v1/tasks/doomed")).status).toBe(204);
    for (let i = 0; i < 50 && (await orka.api("GET", "/api/v1/tasks/doomed")).status !== 404; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await orka.api("GET", "/api/v1/tasks/doomed")).status).toBe(404);
    // A new Task of the same name starts clean: the old result and events are gone.
    await orka.api("POST", "/api/v1/tasks", { name: "doomed", type: "container", command: ["sleep", "5"] });
    expect((await orka.api("GET", "/api/v1/tasks/doomed/result")).body.error.message).toBe("task has no result");
    const events = (await orka.api("GET", "/api/v1/tasks/doomed/events")).body.events;
    expect(events.some((e: any) => e.type === "TaskSucceeded")).toBe(false);
  });

  it("leaves no attempt directories behind: succeeded, retried, timed out or cancelled", async () => {
    const leftovers = () => readdirSync(workDir).filter((d) => /^(echo|flaky|sleepy|long|identity|chatty)-\d+-/.test(d));
    for (let i = 0; i < 50 && leftovers().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(leftovers()).toEqual([]);
  });
});

// A pooled worker process (worker-process.ts loads it): runs many attempts at once (model calls are I/O
// bound), each with its own abort signal.
import { rm } from "node:fs/promises";
import { runFromEnv } from "../../worker/run-from-env.ts";
import { errorMessage, OrkaError } from "../../util/errors.ts";
import { BatchedSender } from "./batched-sender.ts";
import { ControlPlaneChannel } from "./control-plane-channel.ts";
import type { FromWorker, ToWorker } from "./messages.ts";

const running = new Map<string, AbortController>();
// A message the runner can no longer take (it exited first) is dropped: "disconnect" below stops the attempts.
const outgoing = new BatchedSender<FromWorker>({
  write: (batch, done) => (process.connected ? process.send?.(batch, done) : done(null)),
  // An attempt's output written in one turn is stored as one chunk.
  merge: (last, next) => (last.type === "log" && next.type === "log" && last.attemptId === next.attemptId ? { ...last, chunk: last.chunk + next.chunk } : undefined),
});
const send = (message: FromWorker): boolean => {
  if (!process.connected) return false;
  outgoing.push(message);
  return true;
};
const controlPlane = new ControlPlaneChannel(send);

process.on("message", (batch: ToWorker[]) => {
  for (const message of batch) receive(message);
});

function receive(message: ToWorker): void {
  if (message.type === "reply") return controlPlane.answer(message);
  if (message.type === "remove") {
    void rm(message.path, { recursive: true, force: true }).then(
      () => send({ type: "removed", id: message.id }),
      (err: unknown) => send({ type: "removed", id: message.id, error: errorMessage(err) }),
    );
    return;
  }
  if (message.type === "kill") {
    running.get(message.attemptId)?.abort(new OrkaError("unavailable", message.reason));
    controlPlane.stopping(message.attemptId);
    return;
  }
  const controller = new AbortController();
  running.set(message.attemptId, controller);
  const log = (chunk: string) => send({ type: "log", attemptId: message.attemptId, chunk });
  Promise.resolve()
    .then(() => runFromEnv(message.env, { log, signal: controller.signal, transport: controlPlane.transportFor(message.attemptId) }))
    .catch((err) => ({ exitCode: 1, reason: `worker error: ${errorMessage(err)}` }))
    .then((outcome) => {
      running.delete(message.attemptId);
      controlPlane.forget(message.attemptId);
      send({ type: "exit", attemptId: message.attemptId, ...outcome });
    });
}

// Ctrl-C in a terminal reaches the whole foreground process group: the runner stops its workers itself,
// in order, so that their sandboxes end with them.
process.on("SIGINT", () => undefined);

// The runner is our parent: without it there is nobody to report to, so stop everything.
process.on("disconnect", () => {
  controlPlane.close("runner went away");
  for (const controller of running.values()) controller.abort(new OrkaError("unavailable", "runner went away"));
  setTimeout(() => process.exit(0), 1000).unref();
});

send({ type: "ready" });

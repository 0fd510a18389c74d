import http from "node:http";
import type { AddressInfo } from "node:net";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeAttemptDirs } from "../../src/runner/attempt-dirs.ts";
import { prepareAttemptDirs } from "../../src/runner/local/dirs.ts";
import type { AttemptDirs } from "../../src/runner/runner.ts";

/** A call a worker made to the control plane, as the stand-in received it. */
export interface SeenCall {
  method: string;
  path: string;
  body: string;
}

/**
 * A stand-in control plane for a worker under test, on 127.0.0.1: it records every call in `seen`, in
 * order, and answers each as `answer` says.
 */
export async function startStandInControlPlane(answer: (call: SeenCall, res: http.ServerResponse) => void) {
  const seen: SeenCall[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const call = { method: req.method ?? "", path: req.url ?? "", body };
      seen.push(call);
      answer(call, res);
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => void server.close() };
}

/** An attempt's directories, made under the temporary directory; `remove` takes them away again. */
export async function freshAttemptDirs(label: string): Promise<AttemptDirs & { remove: () => void }> {
  const attemptsDir = join(tmpdir(), "orka-attempt-tests");
  const id = `${label}-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const dirs = await prepareAttemptDirs(attemptsDir, id);
  makeAttemptDirs(dirs);
  return { ...dirs, remove: () => rmSync(join(attemptsDir, id), { recursive: true, force: true }) };
}

/**
 * The result a worker stored through its calls: a result posted alone, or the final answer a journal write
 * stored as the result (`answerIsResult`).
 */
export function storedResult(calls: { path: string; body?: string | Uint8Array }[]): string | undefined {
  const text = (body?: string | Uint8Array) => (typeof body === "string" ? body : Buffer.from(body ?? "").toString());
  for (const { path, body } of calls) {
    if (/(^|\/)results\//.test(path)) return text(body);
    if (!/(^|\/)journal\//.test(path) || !body) continue;
    const write = JSON.parse(text(body)) as { answerIsResult?: boolean; steps: { messages: { content: string }[] }[] };
    if (write.answerIsResult) return write.steps.at(-1)!.messages[0].content;
  }
  return undefined;
}

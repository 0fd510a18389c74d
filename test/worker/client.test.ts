import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OrkaError } from "../../src/util/errors.ts";
import { ControlPlaneClient } from "../../src/worker/client.ts";
import { httpTransport } from "../../src/worker/transport.ts";

// The control plane's refusal keeps its meaning in the worker: a code, not only a message.
describe("the worker's control-plane client", () => {
  let server: Server;
  let url = "";
  const answers: Record<string, [number, string]> = {
    missing: [404, JSON.stringify({ error: { code: 404, message: 'tool "missing" not found' } })],
    busy: [503, JSON.stringify({ error: { code: 503, message: "the store cannot be written" } })],
    taken: [409, "not json"],
  };
  beforeAll(async () => {
    server = createServer((request, response) => {
      // Answers by the tool named last in /internal/v1/tools/<namespace>/<task>/<tool>.
      const [status, body] = answers[request.url!.split("?")[0].split("/").pop()!] ?? [500, ""];
      response.writeHead(status, { "content-type": "application/json" }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const client = () => new ControlPlaneClient({ transport: httpTransport(url), token: "t", namespace: "ns", task: "task" });
  const refusal = (name: string) => client().callTool(name, {}).then(() => undefined, (err: unknown) => err);

  it("keeps the server's error as a code and message", async () => {
    for (const [name, code, message] of [
      ["missing", "not_found", 'tool "missing" not found'],
      ["busy", "unavailable", "the store cannot be written"],
      ["taken", "conflict", "not json"],
    ] as const) {
      const err = await refusal(name);
      expect(err, name).toBeInstanceOf(OrkaError);
      expect([(err as OrkaError).code, (err as OrkaError).message]).toEqual([code, message]);
    }
  });
});

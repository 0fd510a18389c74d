import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/cli/client.ts";
import { OrkaError } from "../../src/util/errors.ts";

// The CLI prints the server's message; the code lets `orka apply` tell a missing object from a failure.
describe("the CLI's API client", () => {
  let server: Server;
  let url = "";
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url!.startsWith("/api/v1/missing")) response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: 404, message: 'task "t" not found' } }));
      else response.writeHead(502).end("bad gateway");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const failure = (client: ApiClient, path: string) => client.get(path).then(() => undefined, (err: unknown) => err);

  it("throws the server's error as an OrkaError with its code and message", async () => {
    const client = new ApiClient({ server: url, token: "t" });
    for (const [path, code, message] of [
      ["missing", "not_found", 'task "t" not found'],
      ["broken", "unavailable", "bad gateway"],
    ]) {
      const err = await failure(client, path);
      expect(err, path).toBeInstanceOf(OrkaError);
      expect([(err as OrkaError).code, (err as OrkaError).message]).toEqual([code, message]);
    }
  });

  it("says a server it cannot reach is unavailable, and how to point at another", async () => {
    const err = await failure(new ApiClient({ server: "http://127.0.0.1:9" }), "tasks");
    expect(err).toBeInstanceOf(OrkaError);
    expect((err as OrkaError).code).toBe("unavailable");
    expect((err as OrkaError).message).toMatch(/^cannot reach the Orka server at http:\/\/127\.0\.0\.1:9 \(.*\); is `orka serve` running\?/);
  });
});

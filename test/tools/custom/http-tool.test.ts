import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callHttpTool } from "../../../src/tools/custom/http-tool.ts";
import { toolSpecSchema } from "../../../src/resources/tool.ts";

describe("custom HTTP Tool URL interpolation", () => {
  let server: http.Server;
  let port = 0;
  const hits: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? "");
      res.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = (url: string, args: Record<string, unknown>) => {
    const spec = toolSpecSchema.parse({ description: "d", http: { url: `http://127.0.0.1:${port}${url}`, method: "GET" } });
    return callHttpTool({ spec: spec.http!, parameters: spec.parameters, arguments: args, authValue: "tool-credential", egress: { allowLoopback: true } });
  };

  it("refuses a path value that is, or decodes to, a dot segment, and sends nothing", async () => {
    for (const id of ["..", ".", "%2E%2E", "%2e.", ".%2E", "%2E"]) {
      await expect(call("/api/{{id}}/x", { id }), id).rejects.toThrow(`invalid arguments: id may not be "." or ".." (it is a segment of the URL path); give a name`);
    }
    expect(hits).toEqual([]);
  });

  it("sends other values encoded, dots in a query included", async () => {
    expect(await call("/api/{{id}}/x?q={{q}}", { id: "a..b", q: ".." })).toBe("ok");
    expect(await call("/api/{{id}}/x", { id: "../admin" })).toBe("ok");
    expect(hits).toEqual(["/api/a..b/x?q=..", "/api/..%2Fadmin/x"]);
  });
});

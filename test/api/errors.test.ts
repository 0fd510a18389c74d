import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { apiErrorAnswer } from "../../src/api/errors.ts";
import { OrkaError } from "../../src/util/errors.ts";

// Every API error has one shape; an internal fault is answered like an unexplained one, its detail kept in the log.
describe("the API's error answers", () => {
  it("answers an OrkaError with its status and message, and an internal one or a bare Error as an internal error", async () => {
    const app = Fastify();
    app.setErrorHandler(apiErrorAnswer);
    app.get("/busy", async () => {
      throw new OrkaError("unavailable", "the data store is busy: retry in a moment");
    });
    app.get("/internal", async () => {
      throw new OrkaError("internal", "unknown secret encoding");
    });
    app.get("/bare", async () => {
      throw new Error("something broke");
    });
    const answer = async (url: string) => {
      const response = await app.inject({ url });
      return [response.statusCode, response.json()];
    };
    const internal = [500, { error: { code: 500, message: "internal error; see the server log" } }];
    expect(await answer("/busy")).toEqual([503, { error: { code: 503, message: "the data store is busy: retry in a moment" } }]);
    expect(await answer("/internal")).toEqual(internal);
    expect(await answer("/bare")).toEqual(internal);
    await app.close();
  });
});

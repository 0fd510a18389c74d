import { afterEach, describe, expect, it } from "vitest";
import type { BrokeredTool } from "../../src/runner/attempt-config.ts";
import { tempStore } from "../helpers/store.ts";

describe("a coding-agent session's frozen tools", () => {
  let store: ReturnType<typeof tempStore>;
  afterEach(() => store.close());

  it("are kept with the attempt: name, effect and digest only", () => {
    store = tempStore();
    const attempt = { id: "a-1", namespace: "default", task: "t", taskUid: "u", number: 1, allowedTools: ["web_fetch", "lookup"] };
    store.data.createAttempt(attempt, "token-hash");
    expect(store.data.attemptByTokenHash("token-hash")!.sessionTools).toBeUndefined();

    const brokered: BrokeredTool[] = [
      { name: "web_fetch", description: "Fetch a page", inputSchema: { type: "object" }, effect: "read_only" },
      { name: "lookup", description: "Look up", inputSchema: { type: "object", properties: {} }, effect: "consequential", digest: "sha256:abc" },
    ];
    store.data.recordSessionTools("a-1", brokered);
    expect(store.data.attemptByTokenHash("token-hash")!.sessionTools).toEqual([
      { name: "web_fetch", effect: "read_only" },
      { name: "lookup", effect: "consequential", digest: "sha256:abc" },
    ]);
    expect(store.data.latestAttempt("default", "t")!.sessionTools).toHaveLength(2);
  });
});

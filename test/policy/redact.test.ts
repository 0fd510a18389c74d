import { describe, expect, it } from "vitest";
import { REDACTED, redactValues, TaskSecrets } from "../../src/policy/redact.ts";

describe("redacting known Secret values", () => {
  it("finds a value as sent, JSON-escaped, URL-encoded and base64 (Basic auth)", () => {
    const value = 'svc:p@ss "w0rd"/+';
    const echoed = [
      `raw ${value}`,
      `json ${JSON.stringify({ key: value })}`,
      `query ?key=${encodeURIComponent(value)}`,
      `header Authorization: Basic ${Buffer.from(value).toString("base64")}`,
      `url-safe ${Buffer.from(value).toString("base64url")}`,
    ].join("\n");
    const out = redactValues(echoed, [value]);
    expect(out).toBe(
      [`raw ${REDACTED}`, `json {"key":"${REDACTED}"}`, `query ?key=${REDACTED}`, `header Authorization: Basic ${REDACTED}`, `url-safe ${REDACTED}`].join("\n"),
    );
  });

  it("leaves text that only looks secret, and values too short to be told from words", () => {
    expect(redactValues("Authorization: Bearer sk-not-a-known-value-0000 and the cat", ["cat"])).toBe("Authorization: Bearer sk-not-a-known-value-0000 and the cat");
  });

  it("scrubs a Task's values until its data is deleted, and an attempt's failure reason by attempt id", () => {
    const secrets = new TaskSecrets();
    secrets.remember("team", "t1", "t1-1-abcd", ["model-key-123", undefined]);
    expect(secrets.redact("team", "t1", "got model-key-123", ["tool-key-456"])).toBe(`got ${REDACTED}`);
    expect(secrets.redact("team", "t1", "tool-key-456", ["tool-key-456"])).toBe(REDACTED);
    expect(secrets.redactForAttempt("t1-1-abcd", "401: model-key-123")).toBe(`401: ${REDACTED}`);
    expect(secrets.redact("team", "t2", "model-key-123")).toBe("model-key-123");
    secrets.forget("team", "t1");
    expect(secrets.redact("team", "t1", "model-key-123")).toBe("model-key-123");
    expect(secrets.redactForAttempt("t1-1-abcd", "model-key-123")).toBe("model-key-123");
  });
});

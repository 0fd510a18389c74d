import { describe, expect, it } from "vitest";
import { checkEgressUrl, EgressRefused, forbiddenAddressReason, guardedLookup, guardedRequest, postJsonGuarded } from "../../src/policy/ssrf.ts";

const strict = { allowLoopback: false };

describe("egress (SSRF) checks", () => {
  it.each([
    "http://127.0.0.1/", "http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/", "http://127.1/",
    "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/",
    "http://10.1.2.3/", "http://172.16.0.1/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data",
    "http://[fd00:ec2::254]/", "http://[fe80::1]/", "http://0.0.0.0/", "http://100.64.0.1/",
    "http://metadata.google.internal/", "http://metadata/", "ftp://example.com/", "file:///etc/passwd", "http://user:pw@example.com/",
  ])("refuses %s before connecting", (url) => {
    expect(() => checkEgressUrl(url, strict)).toThrow(EgressRefused);
  });

  it("refuses IPv6 that tunnels to an IPv4 address (6to4, Teredo), which could be a private one", () => {
    for (const address of ["2002:7f00:1::", "2002:c0a8:101::1", "2002:a9fe:a9fe::", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::1"]) {
      expect(forbiddenAddressReason(address, strict), address).toBe("URL must not target private, loopback, or link-local addresses");
      expect(() => checkEgressUrl(`http://[${address}]/`, strict), address).toThrow(EgressRefused);
    }
    expect(forbiddenAddressReason("2001:4860:4860::8888", strict)).toBeUndefined();
    expect(forbiddenAddressReason("2003::1", strict)).toBeUndefined();
  });

  it("allows public addresses, and loopback only when the operator says so", () => {
    expect(checkEgressUrl("https://93.184.215.14/x", strict).hostname).toBe("93.184.215.14");
    expect(() => checkEgressUrl("http://127.0.0.1:8080/", { allowLoopback: true })).not.toThrow();
    expect(forbiddenAddressReason("10.0.0.1", { allowLoopback: true })).toBe("URL must not target private, loopback, or link-local addresses");
  });

  it("checks what a name resolves to, so a DNS name cannot point inside", async () => {
    const lookup = guardedLookup(strict);
    const error = await new Promise<Error | null>((resolve) => lookup("localhost", {}, (err) => resolve(err)));
    expect(error).toBeInstanceOf(EgressRefused);
    expect(error?.message).toBe("URL must not target private, loopback, or link-local addresses");
  });

  // Callers (webhooks, HTTP Tools, probes, web_fetch) tell a refusal from a failure by its type alone.
  it("throws the refusal itself from a guarded request, not wrapped in a cause, whether the URL or its DNS answer is refused", async () => {
    const refusals = [
      guardedRequest("http://127.0.0.1:9/", strict, { maxRedirects: 0, timeoutMs: 5000 }, async () => "answered"),
      guardedRequest("http://localhost:9/", strict, { maxRedirects: 0, timeoutMs: 5000 }, async () => "answered"),
      postJsonGuarded(new URL("http://localhost:9/hook"), {}, {}, strict, 5000),
    ];
    for (const refusal of refusals) {
      const err = await refusal.then(() => undefined, (reason: unknown) => reason);
      expect(err).toBeInstanceOf(EgressRefused);
      expect([(err as EgressRefused).code, (err as EgressRefused).message]).toEqual(["permission_denied", "URL must not target private, loopback, or link-local addresses"]);
    }
  });
});

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { publicationReadCredential, readCredential } from "../../src/controller/workspace-credentials.ts";
import { tempStore } from "../helpers/store.ts";

// Which token a checkout clones and reads the publication branch with.
describe("workspace credentials", () => {
  let store: ReturnType<typeof tempStore>;
  beforeEach(async () => {
    store = tempStore();
    await store.resources.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "keyed", namespace: "default" }, spec: { type: "Opaque", data: { token: "not-the-read-token", password: "the-read-token" } } });
  });
  afterEach(() => store.close());

  it("clones with the read Secret's configured key, as the GitHub tools read it", async () => {
    expect(await readCredential(store.resources, "default", { gitRepo: "https://github.com/o/r", readCredentialRef: "keyed", readCredentialKey: "password" })).toBe("the-read-token");
    expect(await readCredential(store.resources, "default", { gitRepo: "https://github.com/o/r", readCredentialRef: "keyed" })).toBe("not-the-read-token");
  });

  it("refuses a configured key with no value, naming the key", async () => {
    await expect(readCredential(store.resources, "default", { gitRepo: "https://github.com/o/r", readCredentialRef: "keyed", readCredentialKey: "GITHUB_TOKEN" }))
      .rejects.toThrow('Secret "keyed" named by workspace.readCredentialRef has no "GITHUB_TOKEN" key with a value');
  });

  it("reads the publication branch by the usual keys: the read key belongs to the read Secret only", async () => {
    const workspace = { gitRepo: "https://github.com/o/r", readCredentialRef: "other", readCredentialKey: "password", publicationCredentialRef: "keyed" };
    expect(await publicationReadCredential(store.resources, "default", workspace)).toBe("not-the-read-token");
  });
});

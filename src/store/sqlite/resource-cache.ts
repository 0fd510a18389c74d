import type { Resource } from "../../resources/meta.ts";
import { deepFreeze } from "../../util/deep-json.ts";

/** Enough for every Tool, Agent and Provider of a busy server and the Tasks it is running at once. */
const CAPACITY = 4096;

/**
 * Resources as last read, kept in memory. Only this process writes the `resources` table (the data
 * directory is locked to it), so an entry stays true until the store itself writes that object, which
 * drops it. Entries are deep-frozen, since every reader shares them. Kept only from reads outside a
 * transaction: an entry read inside one could show a write that is then rolled back. Secrets are not
 * kept, so that their decrypted values live only as long as the call that needs them. When full, the
 * entry read longest ago goes first.
 */
export class ResourceReadCache {
  private readonly entries = new Map<string, Resource>();

  get(kind: string, namespace: string, name: string): Resource | undefined {
    return this.entries.get(cacheKey(kind, namespace, name));
  }

  /** Keeps `object` (read from the store outside a transaction); returns it frozen. */
  remember(object: Resource): Resource {
    if (object.kind === "Secret") return object;
    const key = cacheKey(object.kind, object.metadata.namespace, object.metadata.name);
    if (this.entries.size >= CAPACITY) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, deepFreeze(object));
    return object;
  }

  /** Called by every write of the object, before it commits: a rollback leaves it unkept, never stale. */
  forget(kind: string, namespace: string, name: string): void {
    this.entries.delete(cacheKey(kind, namespace, name));
  }
}

function cacheKey(kind: string, namespace: string, name: string): string {
  return `${kind}\u0000${namespace}\u0000${name}`;
}

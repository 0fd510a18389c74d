import type { Resource } from "../../resources/meta.ts";
import { deepFreeze } from "../../util/deep-json.ts";

/** Kinds whose whole listing in a namespace is kept: a namespace has few of them, and every Task start lists its Tools. */
const LISTED_KINDS = new Set(["Provider", "Agent", "Tool", "Skill"]);

/** What the kept objects and listings may hold, in bytes of their stored JSON (decoded, they take a few times that). */
const OBJECT_BYTES = 32 * 1024 * 1024;
const LISTING_BYTES = 8 * 1024 * 1024;

/**
 * Resources as last read, kept in memory: single objects, and the whole listing of a namespace for
 * kinds of which there are few. Only this process writes the `resources` table (the data directory is
 * locked to it), so an entry stays true until the store itself writes an object, which drops the
 * object and its namespace's listing before writing it. So an entry is as current as the row even inside
 * a transaction, and is read there too; but it is kept only from reads outside a transaction's body, since
 * a read inside could show a write the body then undoes. (A read between the bodies of a group commit may
 * show writes not committed yet; if their commit fails, the process ends, and this memory with it.)
 * Entries are deep-frozen, since every reader shares them.
 * Secrets are not kept, so that their decrypted values live only as long as the call that needs them.
 */
export class ResourceReadCache {
  private readonly objects = new BoundedEntries<Resource>(OBJECT_BYTES);
  private readonly listings = new BoundedEntries<readonly Resource[]>(LISTING_BYTES);

  get(kind: string, namespace: string, name: string): Resource | undefined {
    return this.objects.get(objectKey(kind, namespace, name));
  }

  /** Keeps `object`, read from the store outside a transaction's body from `bytes` of JSON; returns it, frozen when kept. */
  remember(object: Resource, bytes: number): Resource {
    if (object.kind === "Secret") return object;
    return this.objects.set(objectKey(object.kind, object.metadata.namespace, object.metadata.name), object, bytes);
  }

  /** Every object of `kind` in `namespace`, in list order, when kept. */
  listing(kind: string, namespace: string): readonly Resource[] | undefined {
    return this.listings.get(listingKey(kind, namespace));
  }

  /** Keeps the whole listing of `kind` in `namespace` (read outside a transaction's body) when the kind is one whose listings are kept. */
  rememberListing(kind: string, namespace: string, items: Resource[], bytes: number): readonly Resource[] {
    return LISTED_KINDS.has(kind) ? this.listings.set(listingKey(kind, namespace), items, bytes) : items;
  }

  /**
   * Called by every write of an object before its statement runs: reads later in the same transaction
   * find the row, and a rollback leaves the object unkept, never stale.
   */
  forget(kind: string, namespace: string, name: string): void {
    this.objects.delete(objectKey(kind, namespace, name));
    this.listings.delete(listingKey(kind, namespace));
  }
}

/** Frozen values by key within a byte budget: the value kept longest goes first, and one over an eighth of the budget is not kept. */
class BoundedEntries<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private bytes = 0;
  private readonly maxBytes: number;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: string, value: V, bytes: number): V {
    if (bytes > this.maxBytes / 8) return value;
    this.delete(key);
    for (const [oldest] of this.entries) {
      if (this.bytes + bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
    this.entries.set(key, { value: deepFreeze(value), bytes });
    this.bytes += bytes;
    return value;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}

function objectKey(kind: string, namespace: string, name: string): string {
  return `${kind}\u0000${namespace}\u0000${name}`;
}

function listingKey(kind: string, namespace: string): string {
  return `${kind}\u0000${namespace}`;
}

import type { Resource } from "../../resources/meta.ts";
import { deepFreeze } from "../../util/deep-json.ts";

/** Enough for every Tool, Agent and Provider of a busy server and the Tasks it is running at once. */
const CAPACITY = 4096;

/** Kinds whose whole listing in a namespace is kept: a namespace has few of them, and every Task start lists its Tools. */
const LISTED_KINDS = new Set(["Provider", "Agent", "Tool", "Skill"]);

/**
 * Resources as last read, kept in memory: single objects, and the whole listing of a namespace for
 * kinds of which there are few. Only this process writes the `resources` table (the data directory is
 * locked to it), so an entry stays true until the store itself writes an object, which drops the
 * object and its namespace's listing. Entries are deep-frozen, since every reader shares them. Kept only
 * from reads outside a transaction: one read inside could show a write that is then rolled back. Secrets
 * are not kept, so that their decrypted values live only as long as the call that needs them. When full,
 * the object kept longest goes first.
 */
export class ResourceReadCache {
  private readonly objects = new Map<string, Resource>();
  private readonly listings = new Map<string, readonly Resource[]>();

  get(kind: string, namespace: string, name: string): Resource | undefined {
    return this.objects.get(objectKey(kind, namespace, name));
  }

  /** Keeps `object` (read from the store outside a transaction); returns it, frozen when kept. */
  remember(object: Resource): Resource {
    if (object.kind === "Secret") return object;
    if (this.objects.size >= CAPACITY) this.objects.delete(this.objects.keys().next().value!);
    this.objects.set(objectKey(object.kind, object.metadata.namespace, object.metadata.name), deepFreeze(object));
    return object;
  }

  /** Every object of `kind` in `namespace`, in list order, when kept. */
  listing(kind: string, namespace: string): readonly Resource[] | undefined {
    return this.listings.get(listingKey(kind, namespace));
  }

  /** Keeps the whole listing of `kind` in `namespace` (read outside a transaction) when the kind is one whose listings are kept. */
  rememberListing(kind: string, namespace: string, items: Resource[]): readonly Resource[] {
    if (!LISTED_KINDS.has(kind)) return items;
    const frozen = deepFreeze(items);
    this.listings.set(listingKey(kind, namespace), frozen);
    return frozen;
  }

  /** Called by every write of an object, before it commits: a rollback leaves it unkept, never stale. */
  forget(kind: string, namespace: string, name: string): void {
    this.objects.delete(objectKey(kind, namespace, name));
    this.listings.delete(listingKey(kind, namespace));
  }
}

function objectKey(kind: string, namespace: string, name: string): string {
  return `${kind}\u0000${namespace}\u0000${name}`;
}

function listingKey(kind: string, namespace: string): string {
  return `${kind}\u0000${namespace}`;
}

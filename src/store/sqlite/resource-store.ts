import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { KindName } from "../../resources/kinds.ts";
import type { Resource } from "../../resources/meta.ts";
import { OrkaError } from "../../util/errors.ts";
import type { SecretCipher } from "../secret-cipher.ts";
import {
  parseLabelSelector,
  type ListOptions,
  type ListResult,
  type ResourceStore,
  type WatchEvent,
  type WatchListener,
} from "../resource-store.ts";
import { inTransaction, inTransactionBody, prepared, type Db } from "./db.ts";
import { resourceQuery, type ListPosition } from "./resource-query.ts";
import { ResourceReadCache } from "./resource-cache.ts";

interface Row {
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  body: string;
}

const kindLabel = (kind: string) => kind.toLowerCase();

/** The embedded ResourceStore: one `resources` table, every write in a transaction, watch in-process. */
export class SqliteResourceStore implements ResourceStore {
  private readonly db: Db;
  private readonly cipher: SecretCipher;
  private readonly events = new EventEmitter();
  private readonly statements;
  private readonly cache = new ResourceReadCache();

  constructor(db: Db, cipher: SecretCipher) {
    this.db = db;
    this.cipher = cipher;
    this.events.setMaxListeners(0);
    this.statements = {
      get: db.prepare<[string, string, string], Row>("SELECT * FROM resources WHERE kind = ? AND namespace = ? AND name = ?"),
      insert: db.prepare("INSERT INTO resources (kind, namespace, name, uid, resource_version, body) VALUES (?, ?, ?, ?, ?, ?)"),
      replace: db.prepare("UPDATE resources SET resource_version = ?, body = ? WHERE kind = ? AND namespace = ? AND name = ?"),
      remove: db.prepare("DELETE FROM resources WHERE kind = ? AND namespace = ? AND name = ?"),
      nextVersion: db.prepare<[], { value: number }>(
        "UPDATE counters SET value = value + 1 WHERE name = 'resource_version' RETURNING value",
      ),
      addOwner: db.prepare("INSERT OR IGNORE INTO owner_refs (owner_uid, kind, namespace, name) VALUES (?, ?, ?, ?)"),
      removeOwned: db.prepare("DELETE FROM owner_refs WHERE kind = ? AND namespace = ? AND name = ?"),
      owned: db.prepare<[string], { kind: string; namespace: string; name: string }>(
        "SELECT kind, namespace, name FROM owner_refs WHERE owner_uid = ?",
      ),
      addLabel: db.prepare("INSERT INTO resource_labels (kind, namespace, name, key, value) VALUES (?, ?, ?, ?, ?)"),
      removeLabels: db.prepare("DELETE FROM resource_labels WHERE kind = ? AND namespace = ? AND name = ?"),
      // The expression is the resources_by_phase index's, so the count reads that index only.
      countInPhase: db.prepare<[string, string, string], { count: number }>(
        "SELECT count(*) AS count FROM resources WHERE kind = ? AND namespace = ? AND json_extract(body, '$.status.phase') = ?",
      ),
    };
  }

  async get<S, T>(kind: KindName, namespace: string, name: string): Promise<Resource<S, T> | undefined> {
    return this.lookup(kind, namespace, name) as Resource<S, T> | undefined;
  }

  async list<S, T>(kind: KindName, options: ListOptions = {}): Promise<ListResult<Resource<S, T>>> {
    const { namespace } = options;
    // Read and kept in one synchronous stretch, so what is kept is what the table held outside any transaction's body.
    const wholeNamespace = namespace !== undefined && !options.labelSelector && !options.limit && !options.continue && !inTransactionBody(this.db);
    if (!wholeNamespace) {
      const { bytes: _bytes, ...page } = this.readList<S, T>(kind, options);
      return page;
    }
    const kept = this.cache.listing(kind, namespace);
    if (kept) return { items: kept as Resource<S, T>[] };
    const { items, bytes } = this.readList(kind, options);
    return { items: this.cache.rememberListing(kind, namespace, items, bytes) as Resource<S, T>[] };
  }

  /** A page of a list, and the size of its objects' stored JSON. */
  private readList<S, T>(kind: KindName, options: ListOptions): ListResult<Resource<S, T>> & { bytes: number } {
    const filter = {
      kind,
      namespace: options.namespace,
      after: options.continue ? decodeContinue(options.continue) : undefined,
      selector: parseLabelSelector(options.labelSelector),
    };
    const limit = options.limit ?? 0;
    const query = resourceQuery(filter);
    // One row past the page says whether another page follows; a negative LIMIT is none.
    const rows = prepared<unknown[], Row>(this.db, `SELECT r.* FROM ${query.from} WHERE ${query.where} ORDER BY ${query.orderBy} LIMIT +?`).all(
      ...query.params,
      limit > 0 ? limit + 1 : -1,
    );
    const page = rows.slice(0, limit > 0 ? limit : undefined);
    const items = page.map((row) => this.decode(row) as Resource<S, T>);
    const bytes = page.reduce((sum, row) => sum + row.body.length, 0);
    if (rows.length === items.length) return { items, bytes };
    const last = items[items.length - 1].metadata;
    const position = { namespace: last.namespace, name: last.name };
    const rest = resourceQuery({ ...filter, after: position });
    const remaining = prepared<unknown[], { count: number }>(this.db, `SELECT count(*) AS count FROM ${rest.from} WHERE ${rest.where}`).get(...rest.params)!;
    return { items, bytes, continue: encodeContinue(position), remainingItemCount: remaining.count };
  }

  async countInPhase(kind: KindName, namespace: string, phase: string): Promise<number> {
    return this.statements.countInPhase.get(kind, namespace, phase)!.count;
  }

  async create<S, T>(object: Resource<S, T>): Promise<Resource<S, T>> {
    const meta = object.metadata;
    const created = inTransaction(this.db, () => {
      if (this.statements.get.get(object.kind, meta.namespace, meta.name)) {
        throw new OrkaError("already_exists", `${kindLabel(object.kind)} already exists`);
      }
      const stored: Resource<S, T> = {
        ...object,
        metadata: {
          ...meta,
          uid: randomUUID(),
          generation: 1,
          creationTimestamp: new Date().toISOString(),
          deletionTimestamp: undefined,
          resourceVersion: String(this.nextVersion()),
        },
      };
      this.cache.forget(object.kind, meta.namespace, meta.name);
      this.statements.insert.run(object.kind, meta.namespace, meta.name, stored.metadata.uid, Number(stored.metadata.resourceVersion), this.encode(stored));
      this.indexOwners(stored);
      this.indexLabels(stored);
      return stored;
    });
    this.emit({ type: "ADDED", object: created });
    return created;
  }

  async update<S, T>(object: Resource<S, T>): Promise<Resource<S, T>> {
    return this.write(object, (current, next) => {
      const specChanged = JSON.stringify(current.spec) !== JSON.stringify(next.spec);
      return {
        ...next,
        metadata: {
          ...next.metadata,
          uid: current.metadata.uid,
          creationTimestamp: current.metadata.creationTimestamp,
          deletionTimestamp: current.metadata.deletionTimestamp,
          generation: (current.metadata.generation ?? 1) + (specChanged ? 1 : 0),
        },
        status: current.status,
      };
    });
  }

  async updateStatus<S, T>(object: Resource<S, T>): Promise<Resource<S, T>> {
    return this.write(object, (current, next) => ({ ...current, status: next.status }));
  }

  async delete(kind: KindName, namespace: string, name: string): Promise<void> {
    const emitted: WatchEvent[] = [];
    inTransaction(this.db, () => this.deleteInTransaction(kind, namespace, name, emitted, true));
    for (const event of emitted) this.emit(event);
  }

  watch(listener: WatchListener): () => void {
    this.events.on("event", listener);
    return () => this.events.off("event", listener);
  }

  private write<S, T>(
    object: Resource<S, T>,
    merge: (current: Resource<S, T>, next: Resource<S, T>) => Resource<S, T>,
  ): Promise<Resource<S, T>> {
    const meta = object.metadata;
    const emitted: WatchEvent[] = [];
    const written = inTransaction(this.db, () => {
      const current = this.lookup(object.kind, meta.namespace, meta.name) as Resource<S, T> | undefined;
      if (!current) throw new OrkaError("not_found", `${kindLabel(object.kind)} not found`);
      if (meta.resourceVersion !== undefined && meta.resourceVersion !== current.metadata.resourceVersion) {
        throw new OrkaError("conflict", `${kindLabel(object.kind)} ${meta.name} was modified concurrently; read it again and retry`);
      }
      const next = merge(current, object);
      next.metadata = { ...next.metadata, resourceVersion: String(this.nextVersion()) };
      if (next.metadata.deletionTimestamp && (next.metadata.finalizers?.length ?? 0) === 0) {
        this.deleteInTransaction(object.kind as KindName, meta.namespace, meta.name, emitted, false);
        return next;
      }
      this.cache.forget(object.kind, meta.namespace, meta.name);
      this.statements.replace.run(Number(next.metadata.resourceVersion), this.encode(next), object.kind, meta.namespace, meta.name);
      this.indexOwners(next);
      if (!sameLabels(current.metadata.labels, next.metadata.labels)) {
        this.statements.removeLabels.run(object.kind, meta.namespace, meta.name);
        this.indexLabels(next);
      }
      emitted.push({ type: "MODIFIED", object: next });
      return next;
    });
    for (const event of emitted) this.emit(event);
    return Promise.resolve(written);
  }

  /**
   * The object as this connection sees it. A kept copy is as current as the row even within a transaction,
   * since every write drops it before writing; only what is read outside a transaction's body is kept.
   */
  private lookup(kind: string, namespace: string, name: string): Resource | undefined {
    const kept = this.cache.get(kind, namespace, name);
    if (kept) return kept;
    const row = this.statements.get.get(kind, namespace, name);
    if (!row) return undefined;
    const object = this.decode(row);
    return inTransactionBody(this.db) ? object : this.cache.remember(object, row.body.length);
  }

  private deleteInTransaction(kind: KindName, namespace: string, name: string, emitted: WatchEvent[], honourFinalizers: boolean): void {
    const row = this.statements.get.get(kind, namespace, name);
    if (!row) {
      if (honourFinalizers) throw new OrkaError("not_found", `${kindLabel(kind)} not found`);
      return;
    }
    const current = this.decode(row);
    if (honourFinalizers && (current.metadata.finalizers?.length ?? 0) > 0) {
      if (current.metadata.deletionTimestamp) return;
      const marked = {
        ...current,
        metadata: { ...current.metadata, deletionTimestamp: new Date().toISOString(), resourceVersion: String(this.nextVersion()) },
      };
      this.cache.forget(kind, namespace, name);
      this.statements.replace.run(Number(marked.metadata.resourceVersion), this.encode(marked), kind, namespace, name);
      emitted.push({ type: "MODIFIED", object: marked });
      return;
    }
    this.cache.forget(kind, namespace, name);
    this.statements.remove.run(kind, namespace, name);
    this.statements.removeOwned.run(kind, namespace, name);
    this.statements.removeLabels.run(kind, namespace, name);
    emitted.push({ type: "DELETED", object: current });
    for (const child of this.statements.owned.all(row.uid)) {
      this.deleteInTransaction(child.kind as KindName, child.namespace, child.name, emitted, true);
    }
  }

  private indexOwners(object: Resource): void {
    for (const owner of object.metadata.ownerReferences ?? []) {
      this.statements.addOwner.run(owner.uid, object.kind, object.metadata.namespace, object.metadata.name);
    }
  }

  private indexLabels(object: Resource): void {
    for (const [key, value] of Object.entries(object.metadata.labels ?? {})) {
      // A label set to undefined is not stored (JSON drops it), so it is not indexed either.
      if (value !== undefined) this.statements.addLabel.run(object.kind, object.metadata.namespace, object.metadata.name, key, value);
    }
  }

  private nextVersion(): number {
    return this.statements.nextVersion.get()!.value;
  }

  private encode(object: Resource): string {
    if (object.kind !== "Secret") return JSON.stringify(object);
    return JSON.stringify({ ...object, spec: this.cipher.encrypt(JSON.stringify(object.spec)) });
  }

  private decode(row: Row): Resource {
    const object = JSON.parse(row.body) as Resource;
    if (object.kind === "Secret") object.spec = JSON.parse(this.cipher.decrypt(object.spec as string));
    return object;
  }

  private emit(event: WatchEvent): void {
    this.events.emit("event", event);
  }
}

function sameLabels(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const entries = Object.entries(a ?? {});
  return entries.length === Object.keys(b ?? {}).length && entries.every(([key, value]) => b?.[key] === value);
}

function encodeContinue(position: ListPosition): string {
  return Buffer.from(JSON.stringify(position)).toString("base64url");
}

function decodeContinue(token: string): ListPosition {
  try {
    const position = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    if (typeof position.namespace === "string" && typeof position.name === "string") return position;
  } catch {
    // fall through to the error below
  }
  throw new OrkaError("invalid_argument", "invalid continue token: pass back the metadata.continue of the previous page");
}

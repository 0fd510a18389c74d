import type { Resource } from "../resources/meta.ts";
import type { KindName } from "../resources/kinds.ts";
import { OrkaError } from "../util/errors.ts";

export interface ListOptions {
  /** Omitted: every namespace. */
  namespace?: string;
  labelSelector?: string;
  /** 0 or omitted: everything. */
  limit?: number;
  /** The continue token of the previous page of the same list. */
  continue?: string;
}

export interface ListResult<T> {
  items: T[];
  continue?: string;
  remainingItemCount?: number;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";
export interface WatchEvent {
  type: WatchEventType;
  object: Resource;
}
export type WatchListener = (event: WatchEvent) => void;

/**
 * Resources with Kubernetes semantics: optimistic concurrency on resourceVersion (409 on
 * conflict), status written apart from spec, deletion through finalizers and owner references.
 */
export interface ResourceStore {
  /** The object as stored. It may be shared with other readers, and frozen: build a new one to change it. */
  get<S = unknown, T = unknown>(kind: KindName, namespace: string, name: string): Promise<Resource<S, T> | undefined>;
  /** Objects in (namespace, name) order; like `get`'s, the list and its objects may be shared and frozen. */
  list<S = unknown, T = unknown>(kind: KindName, options?: ListOptions): Promise<ListResult<Resource<S, T>>>;
  /**
   * How many objects of a kind in a namespace have this status.phase, answered from an index
   * (a field selector on status.phase where the store is Kubernetes), without reading the objects.
   */
  countInPhase(kind: KindName, namespace: string, phase: string): Promise<number>;
  create<S, T>(object: Resource<S, T>): Promise<Resource<S, T>>;
  /** Replaces metadata and spec; status is kept. A given resourceVersion must match. */
  update<S, T>(object: Resource<S, T>): Promise<Resource<S, T>>;
  /** Replaces status only. A given resourceVersion must match. */
  updateStatus<S, T>(object: Resource<S, T>): Promise<Resource<S, T>>;
  /** Marks for deletion while finalizers remain; otherwise removes it and cascades to owned objects. */
  delete(kind: KindName, namespace: string, name: string): Promise<void>;
  watch(listener: WatchListener): () => void;
}

export interface LabelRequirement {
  key: string;
  op: "=" | "!=" | "exists" | "!exists" | "in" | "notin";
  values: string[];
}

const labelKey = /^([a-z0-9A-Z.\-_/]+)$/;

/** Parses a Kubernetes equality- or set-based label selector (`a=b,c!=d,e,!f,g in (x,y)`). */
export function parseLabelSelector(selector: string | undefined): LabelRequirement[] {
  if (!selector?.trim()) return [];
  const parts = selector.match(/[^,(]+(\([^)]*\))?/g) ?? [];
  return parts.map((raw) => {
    const part = raw.trim();
    const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
    if (set) return { key: set[1], op: set[2] as "in" | "notin", values: set[3].split(",").map((v) => v.trim()) };
    const eq = /^([^=!]+)(==|=|!=)(.*)$/.exec(part);
    if (eq) return { key: eq[1].trim(), op: eq[2] === "!=" ? "!=" : "=", values: [eq[3].trim()] };
    if (part.startsWith("!") && labelKey.test(part.slice(1))) return { key: part.slice(1), op: "!exists", values: [] };
    if (labelKey.test(part)) return { key: part, op: "exists", values: [] };
    throw new OrkaError("invalid_argument", `invalid label selector "${selector}": use key=value, key!=value, key or !key`);
  });
}

import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { ApiError, type Query, type SseMessage } from "./api.ts";
import { useApi } from "./api-context.ts";

export interface Loaded<T> {
  data?: T;
  error?: string;
  reload: () => void;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * GETs an API path, cached under the namespace, path and query it asks for, so a page only ever shows
 * the answer to its own request; again every `pollMs` while mounted. `missing` stands in for a 404.
 */
export function useApiGet<T>(path: string, query: Query = {}, options: { pollMs?: number; enabled?: boolean; missing?: T } = {}): Loaded<T> {
  const api = useApi();
  const result = useQuery({
    queryKey: [api.session.namespace, path, query],
    queryFn: () =>
      api.get<T>(path, query).catch((err: unknown) => (options.missing !== undefined && err instanceof ApiError && err.status === 404 ? options.missing : Promise.reject(err))),
    refetchInterval: options.pollMs,
    enabled: options.enabled,
  });
  return { data: result.data, error: result.error ? errorText(result.error) : undefined, reload: () => void result.refetch() };
}

export type StreamState = "live" | "complete" | "error";

const RECONNECT_MS = 2000;

/** One connection of a followed stream: what to ask for, and what to do with each message. */
export interface StreamConnection {
  query?: Query;
  onMessage: (message: SseMessage) => void;
}

/** Where a stream of numbered messages (SSE ids) got to, for one namespace and path only. */
interface StreamPosition {
  key: string;
  lastId: number;
}

/**
 * Follows a server-sent event stream of the API. `connect` runs at each (re)connection. A stream that
 * ends without `endEvent` was cut (a restart, a proxy): it says so and connects again after 2 s,
 * resuming after the last numbered message of this same path; another path starts from its beginning.
 */
export function useStream(path: string, connect: () => StreamConnection, endEvent?: string): { state: StreamState; error?: string; reconnect: () => void } {
  const api = useApi();
  const [state, setState] = useState<StreamState>("live");
  const [error, setError] = useState<string>();
  const [attempt, setAttempt] = useState(0);
  const connector = useRef(connect);
  connector.current = connect;
  const position = useRef<StreamPosition>({ key: "", lastId: 0 });

  useEffect(() => {
    const abort = new AbortController();
    const { query, onMessage } = connector.current();
    const key = `${api.session.namespace}/${path}`;
    if (position.current.key !== key) position.current = { key, lastId: 0 };
    // This connection moves only its own path's position, even if a late message arrives after it is left.
    const at = position.current;
    let ended = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    setState("live");
    setError(undefined);
    const lost = (message: string) => {
      if (abort.signal.aborted) return;
      setError(message);
      setState("error");
      retry = setTimeout(() => setAttempt((n) => n + 1), RECONNECT_MS);
    };
    const receive = (message: SseMessage) => {
      if (abort.signal.aborted) return;
      if (message.id !== undefined) {
        const id = Number(message.id);
        if (id <= at.lastId) return;
        at.lastId = id;
      }
      if (message.event === endEvent) {
        ended = true;
        setState("complete");
      }
      onMessage(message);
    };
    api
      .stream(path, receive, abort.signal, query, at.lastId ? String(at.lastId) : undefined)
      .then(() => ended || lost("the connection closed before the stream ended; reconnecting"))
      .catch((err: unknown) => lost(`${errorText(err)}; reconnecting`));
    return () => {
      abort.abort();
      clearTimeout(retry);
    };
  }, [api, path, attempt, endEvent]);

  return { state, error, reconnect: () => setAttempt((n) => n + 1) };
}

/**
 * The data of a stream's `event` messages, in order, kept for one namespace and path: when the path
 * changes the list starts empty, so a page never shows another path's messages.
 */
export function useStreamedItems<T>(path: string, event: string, endEvent?: string) {
  const api = useApi();
  const key = `${api.session.namespace}/${path}`;
  const [collected, setCollected] = useState<{ key: string; items: T[] }>({ key, items: [] });
  const stream = useStream(
    path,
    () => ({
      onMessage: (message) => {
        if (message.event !== event) return;
        const item = message.data as T;
        setCollected((current) => (current.key === key ? { key, items: [...current.items, item] } : { key, items: [item] }));
      },
    }),
    endEvent,
  );
  return { ...stream, items: collected.key === key ? collected.items : [] };
}

/** Changes close together cause one reload, not one each. */
const CHANGE_SETTLE_MS = 1000;

/**
 * Calls `onChange` (at most once a second) when a Task of the namespace changes after the watch
 * position `from`; a reconnection resumes where it left off instead of listing the Tasks again.
 */
export function useTaskChanges(from: number, onChange: () => void): void {
  const latest = useRef(onChange);
  latest.current = onChange;
  const pending = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(pending.current), []);
  useStream("watch/tasks", () => ({
    query: { resourceVersion: from },
    onMessage: ({ event }) => {
      if (!["ADDED", "MODIFIED", "DELETED"].includes(event) || pending.current) return;
      pending.current = setTimeout(() => {
        pending.current = undefined;
        latest.current();
      }, CHANGE_SETTLE_MS);
    },
  }));
}

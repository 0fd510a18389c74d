import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { ApiError, type Query, type SseMessage } from "./api.ts";
import { useApi } from "./App.tsx";
import type { Task } from "./types.ts";

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

/**
 * Follows a server-sent event stream of the API. `connect` runs at each (re)connection. A stream that
 * ends without `endEvent` was cut (a restart, a proxy): it says so and connects again after 2 s.
 */
export function useStream(path: string, connect: () => StreamConnection, endEvent?: string): { state: StreamState; error?: string; reconnect: () => void } {
  const api = useApi();
  const [state, setState] = useState<StreamState>("live");
  const [error, setError] = useState<string>();
  const [attempt, setAttempt] = useState(0);
  const connector = useRef(connect);
  connector.current = connect;

  useEffect(() => {
    const abort = new AbortController();
    const { query, onMessage } = connector.current();
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
      if (message.event === endEvent) {
        ended = true;
        setState("complete");
      }
      onMessage(message);
    };
    api
      .stream(path, receive, abort.signal, query)
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
 * Every Task of the namespace: listed once by the server's watch, then kept current change by change,
 * so a page that counts them never lists them all again.
 */
export function useWatchedTasks(): Loaded<Task[]> {
  const [synced, setSynced] = useState<Task[]>();
  const stream = useStream("watch/tasks", () => {
    // Each connection starts from a fresh list: what changed while it was down is in it.
    const next = new Map<string, Task>();
    let listed = false;
    return {
      onMessage: ({ event, data }) => {
        if (event === "synced") listed = true;
        else if (event === "DELETED") next.delete((data as Task).metadata.name);
        else if (event === "ADDED" || event === "MODIFIED") next.set((data as Task).metadata.name, data as Task);
        else return;
        if (listed) setSynced([...next.values()]);
      },
    };
  });
  return { data: synced, error: stream.error, reload: stream.reconnect };
}

import { useCallback, useEffect, useRef, useState } from "react";

export interface Loaded<T> {
  data?: T;
  error?: string;
  loading: boolean;
  reload: () => void;
}

/** Loads with `load`, again when `deps` change, and every `pollMs` while mounted (when given). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], pollMs?: number): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const loader = useRef(load);
  loader.current = load;
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);

  useEffect(() => {
    let live = true;
    const run = () =>
      loader.current().then(
        (data) => live && setState({ data, loading: false }),
        (err: unknown) => live && setState((s) => ({ data: s.data, error: err instanceof Error ? err.message : String(err), loading: false })),
      );
    void run();
    const timer = pollMs ? setInterval(run, pollMs) : undefined;
    return () => {
      live = false;
      if (timer) clearInterval(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick, pollMs]);

  return { ...state, reload };
}

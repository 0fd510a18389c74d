/** The dashboard's only door to Orka: the REST API with the signed-in token, in the chosen namespace. */

export class ApiError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export interface Session {
  token: string;
  namespace: string;
}

const TOKEN_KEY = "orka.token";
const NAMESPACE_KEY = "orka.namespace";

export function loadSession(): Session | undefined {
  const token = localStorage.getItem(TOKEN_KEY);
  return token ? { token, namespace: localStorage.getItem(NAMESPACE_KEY) || "default" } : undefined;
}

export function saveSession(session: Session | undefined): void {
  if (!session) {
    localStorage.removeItem(TOKEN_KEY);
    return;
  }
  localStorage.setItem(TOKEN_KEY, session.token);
  localStorage.setItem(NAMESPACE_KEY, session.namespace);
}

export type Query = Record<string, string | number | undefined>;

export interface SseMessage {
  event: string;
  data: unknown;
  id?: string;
}

export class Api {
  readonly session: Session;
  private readonly onUnauthorized: () => void;

  constructor(session: Session, onUnauthorized: () => void) {
    this.session = session;
    this.onUnauthorized = onUnauthorized;
  }

  get<T>(path: string, query: Query = {}): Promise<T> {
    return this.request<T>("GET", path, undefined, query);
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  delete<T>(path: string): Promise<T> {
    return this.request<T>("DELETE", path);
  }

  /** Downloads a file (artifacts need the token, so a plain link cannot fetch them). */
  async download(path: string, file: string): Promise<void> {
    const response = await this.fetch("GET", path);
    const url = URL.createObjectURL(await response.blob());
    const link = Object.assign(document.createElement("a"), { href: url, download: file });
    link.click();
    URL.revokeObjectURL(url);
  }

  /**
   * Follows a server-sent event stream with the token in a header (EventSource cannot send one).
   * Resolves when the stream ends; abort the signal to stop early. `lastEventId` resumes after that message.
   */
  async stream(path: string, onMessage: (message: SseMessage) => void, signal: AbortSignal, query: Query = {}, lastEventId?: string): Promise<void> {
    const headers: Record<string, string> = { accept: "text/event-stream", ...(lastEventId ? { "last-event-id": lastEventId } : {}) };
    const response = await this.fetch("GET", path, undefined, query, signal, headers);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const message = parseSseBlock(block);
        if (message) onMessage(message);
      }
    }
  }

  private async request<T>(method: string, path: string, body?: unknown, query: Query = {}): Promise<T> {
    const response = await this.fetch(method, path, body, query);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private async fetch(method: string, path: string, body?: unknown, query: Query = {}, signal?: AbortSignal, headers: Record<string, string> = {}): Promise<Response> {
    const url = new URL(`/api/v1/${path}`, window.location.origin);
    url.searchParams.set("namespace", this.session.namespace);
    for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== "") url.searchParams.set(key, String(value));
    const response = await fetch(url, {
      method,
      signal,
      headers: { authorization: `Bearer ${this.session.token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    if (response.status === 401) this.onUnauthorized();
    if (!response.ok) {
      const text = await response.text();
      let message = text || response.statusText;
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        // not JSON: keep the text
      }
      throw new ApiError(response.status, message);
    }
    return response;
  }
}

function parseSseBlock(block: string): SseMessage | undefined {
  let event = "message";
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    else if (line.startsWith("id:")) id = line.slice(3).trim();
  }
  if (data.length === 0) return undefined;
  const text = data.join("\n");
  try {
    return { event, id, data: JSON.parse(text) };
  } catch {
    return { event, id, data: text };
  }
}

/** Checks a token and returns who it belongs to; refuses with the server's message. */
export async function whoAmI(token: string): Promise<{ name: string; namespace: string | null; role?: string; admin: boolean }> {
  const response = await fetch("/api/v1/auth/whoami", { headers: { authorization: `Bearer ${token}` } });
  const body = await response.json();
  if (!response.ok) throw new ApiError(response.status, body?.error?.message ?? "sign-in failed");
  return body;
}

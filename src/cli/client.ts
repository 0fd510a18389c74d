import { errorFromAnswer, OrkaError } from "../util/errors.ts";

/** The CLI's HTTP client for /api/v1; an error is the server's, as an OrkaError with its code and message. */
export class ApiClient {
  readonly server: string;
  private readonly token: string | undefined;
  /** A transaction token, sent as `Txn-Token` (and then it is the credential). */
  private readonly txnToken: string | undefined;
  readonly namespace: string | undefined;

  constructor(options: { server: string; token?: string; txnToken?: string; namespace?: string }) {
    this.server = options.server.replace(/\/+$/, "");
    this.token = options.token;
    this.txnToken = options.txnToken;
    this.namespace = options.namespace;
  }

  /** The same server and credentials, acting in another namespace (unchanged when none is given). */
  withNamespace(namespace: string | undefined): ApiClient {
    return namespace ? new ApiClient({ server: this.server, token: this.token, txnToken: this.txnToken, namespace }) : this;
  }

  get<T = unknown>(path: string, query: Record<string, string | undefined> = {}): Promise<T> {
    return this.request<T>("GET", path, undefined, query);
  }

  post<T = unknown>(path: string, body?: unknown): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  put<T = unknown>(path: string, body: unknown): Promise<T> {
    return this.request<T>("PUT", path, body);
  }

  delete(path: string): Promise<unknown> {
    return this.request("DELETE", path);
  }

  /** Opens a Server-Sent Events stream and yields its frames. */
  async *stream(path: string, query: Record<string, string | undefined> = {}): AsyncGenerator<{ event: string; data: string }> {
    const response = await fetch(this.url(path, query), { headers: this.headers() });
    if (!response.ok || !response.body) throw await this.errorFrom(response);
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of response.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = "message";
        const data: string[] = [];
        for (const line of frame.split("\n")) {
          if (line.startsWith("event: ")) event = line.slice(7);
          else if (line.startsWith("data: ")) data.push(line.slice(6));
        }
        if (data.length > 0) yield { event, data: data.join("\n") };
      }
    }
  }

  private url(path: string, query: Record<string, string | undefined>): string {
    const url = new URL(`${this.server}/api/v1/${path}`);
    if (this.namespace) url.searchParams.set("namespace", this.namespace);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, value);
    return url.toString();
  }

  private headers(): Record<string, string> {
    return { ...(this.token ? { authorization: `Bearer ${this.token}` } : {}), ...(this.txnToken ? { "txn-token": this.txnToken } : {}) };
  }

  private async request<T>(method: string, path: string, body?: unknown, query: Record<string, string | undefined> = {}): Promise<T> {
    let response: Response;
    try {
      response = await fetch(this.url(path, query), {
        method,
        headers: { ...this.headers(), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
    } catch (err) {
      throw new OrkaError("unavailable", `cannot reach the Orka server at ${this.server} (${(err as Error).cause ?? (err as Error).message}); is \`orka serve\` running? Set it with --server or \`orka config set-server\``);
    }
    if (!response.ok) throw await this.errorFrom(response);
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private async errorFrom(response: Response): Promise<OrkaError> {
    return errorFromAnswer(response.status, await response.text(), `HTTP ${response.status}`);
  }
}

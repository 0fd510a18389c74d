import type { Readable, Writable } from "node:stream";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { redactForStorage } from "../../policy/redact.ts";
import { errorMessage } from "../../util/errors.ts";

/** A stdio MCP server's process as its launcher started it: its pipes, its exit, and a kill that ends all it started. */
export interface StdioServerProcess {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  exited: Promise<{ exitCode: number | null; signal: string | null }>;
  kill(): void;
}

/** What a stdio MCP Tool's server is started from: the Tool's `mcp.command` and `mcp.env`. */
export interface StdioServerCommand {
  command: string[];
  env: Record<string, string>;
}

/**
 * Starts a stdio MCP server. The server process wires the sandbox in at start-up: the probe and the
 * calls get this function, so neither the controller nor the API imports the sandbox.
 */
export type StdioServerLauncher = (server: StdioServerCommand) => Promise<StdioServerProcess>;

/** What is kept of a server's stderr, for the error its caller reads: the last bytes, where the reason usually is. */
const STDERR_TAIL_BYTES = 2048;
/** How much of a line that is not JSON-RPC an error quotes. */
const JUNK_QUOTE_CHARS = 200;
/** A killed sandbox exits at once; this only keeps a stuck exit from stalling the call that closes it. */
const EXIT_WAIT_MS = 2_000;

/**
 * The MCP client's transport to one server process whose start Orka controls (the SDK's own stdio
 * transport spawns the process itself). Messages are framed by the SDK's `ReadBuffer` and
 * `serializeMessage`; a line that is not JSON-RPC ends the session at once, and closing kills the process.
 */
export class ProcessStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly launch: () => Promise<StdioServerProcess>;
  private readonly readBuffer: ReadBuffer;
  private launching?: Promise<StdioServerProcess>;
  private process?: StdioServerProcess;
  private stderrTail = Buffer.alloc(0);
  /** Why the server failed the session; a session Orka closed has no failure, so the client's own error stands. */
  private ended?: string;
  /** Set by the first close; every later close waits for the same end. */
  private closing?: Promise<void>;

  constructor(launch: () => Promise<StdioServerProcess>, maxMessageBytes: number) {
    this.launch = launch;
    this.readBuffer = new ReadBuffer({ maxBufferSize: maxMessageBytes });
  }

  /** Why the server stopped answering (it exited, or wrote what is not JSON-RPC), with the end of its stderr, scrubbed. */
  get failure(): string | undefined {
    if (!this.ended) return undefined;
    const stderr = this.stderrTail.toString("utf8").trim();
    return redactForStorage(stderr ? `${this.ended}; its stderr ends: ${stderr}` : this.ended);
  }

  async start(): Promise<void> {
    this.launching = this.launch();
    const child = await this.launching;
    this.process = child;
    child.stdin.on("error", (err) => this.fail(`writing to the server failed: ${errorMessage(err)}`));
    child.stdout.on("data", (chunk: Buffer) => this.receive(chunk));
    child.stderr.on("data", (chunk: Buffer) => {
      const kept = Buffer.concat([this.stderrTail, chunk]);
      this.stderrTail = kept.subarray(Math.max(0, kept.length - STDERR_TAIL_BYTES));
    });
    child.exited.then(
      ({ exitCode, signal }) => this.fail(`the server exited (${signal ? `killed by ${signal}` : `exit code ${exitCode}`}) before it answered`),
      (err: unknown) => this.fail(`the server could not be started: ${errorMessage(err)}`),
    );
    // Closed while it was starting: its output is still drained above, so its exit is seen and its files removed.
    if (this.closing) child.kill();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.process?.stdin;
    if (!stdin || this.ended || this.closing) throw new Error(this.failure ?? "the server is not running");
    if (!stdin.write(serializeMessage(message))) await new Promise<void>((resolve) => stdin.once("drain", resolve));
  }

  close(): Promise<void> {
    this.closing ??= this.end();
    return this.closing;
  }

  private async end(): Promise<void> {
    // A close during the launch (the deadline passed) still ends the process once it is there.
    const child = this.process ?? (await this.launching?.catch(() => undefined));
    if (child) {
      child.kill();
      await Promise.race([child.exited.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, EXIT_WAIT_MS).unref())]);
    }
    this.readBuffer.clear();
    this.onclose?.();
  }

  private receive(chunk: Buffer): void {
    if (this.ended || this.closing) return;
    try {
      this.readBuffer.append(chunk);
      for (let message = this.readBuffer.readMessage(); message; message = this.readBuffer.readMessage()) this.onmessage?.(message);
    } catch (err) {
      const line = chunk.toString("utf8").split("\n")[0].slice(0, JUNK_QUOTE_CHARS);
      this.fail(`the server wrote to stdout what is not a JSON-RPC message (${errorMessage(err).slice(0, JUNK_QUOTE_CHARS)}): ${JSON.stringify(line)}`);
    }
  }

  /** The session cannot go on: the reason is kept for the caller's error, and the process is ended. */
  private fail(reason: string): void {
    if (this.ended || this.closing) return;
    this.ended = reason;
    this.onerror?.(new Error(reason));
    void this.close();
  }
}

/** Keeps the first `limit` bytes of a stream and counts what it drops. */
export class BoundedText {
  private readonly limit: number;
  private readonly chunks: string[] = [];
  private bytes = 0;
  private omitted = 0;
  truncated = false;

  constructor(limit: number) {
    this.limit = limit;
  }

  append(chunk: string): void {
    const buffer = Buffer.from(chunk, "utf8");
    if (this.bytes >= this.limit) {
      this.truncated = true;
      this.omitted += buffer.length;
      return;
    }
    const room = this.limit - this.bytes;
    if (buffer.length > room) {
      this.chunks.push(buffer.subarray(0, room).toString("utf8"));
      this.bytes = this.limit;
      this.omitted += buffer.length - room;
      this.truncated = true;
    } else {
      this.chunks.push(chunk);
      this.bytes += buffer.length;
    }
  }

  text(): string {
    const marker = `\n[truncated after ${this.limit} bytes; ${this.omitted} bytes omitted]`;
    return this.chunks.join("") + (this.truncated ? marker : "");
  }
}

/** Keeps the last `limit` bytes of a stream: where a failing process says why. */
export class TailText {
  private readonly limit: number;
  private kept = Buffer.alloc(0);
  truncated = false;

  constructor(limit: number) {
    this.limit = limit;
  }

  append(chunk: string): void {
    const joined = Buffer.concat([this.kept, Buffer.from(chunk, "utf8")]);
    if (joined.length > this.limit) this.truncated = true;
    this.kept = joined.subarray(Math.max(0, joined.length - this.limit));
  }

  /** The kept bytes, starting at the first whole character. */
  text(): string {
    let start = 0;
    while (start < this.kept.length && (this.kept[start] & 0xc0) === 0x80) start++;
    return this.kept.subarray(start).toString("utf8");
  }
}

import type { OutputGate } from "../../src/store/output-gate.ts";

/** An output gate the test closes and opens, as a store's uncommitted writes and their commit would. */
export class HeldGate implements OutputGate {
  private held: (() => void)[] | undefined;
  private waiting = Promise.withResolvers<void>();

  /** As a write would: what is sent from now on waits for `open`. */
  close(): void {
    this.held ??= [];
  }

  /** As the commit would: sends what waited, in order. */
  open(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const send of held) send();
    this.waiting.resolve();
    this.waiting = Promise.withResolvers<void>();
  }

  release(send: () => void): void {
    if (this.held) this.held.push(send);
    else send();
  }

  settled(): Promise<void> {
    return this.held ? this.waiting.promise : Promise.resolve();
  }
}

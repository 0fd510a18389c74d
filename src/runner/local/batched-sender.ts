interface BatchedSenderOptions<T> {
  write: (batch: T[], done: (err: Error | null) => void) => void;
  /** Hears of a batch the channel did not take (the other side is gone). */
  failed?: (batch: T[], err: Error) => void;
  /** One message standing for the last queued one and the next, when they can travel as one. */
  merge?: (last: T, next: T) => T | undefined;
}

/**
 * Sends messages over a process's IPC channel in order, those sent in one turn of the event loop as one
 * IPC message: under load, one write (and one wake-up of the other side) per turn instead of per message.
 */
export class BatchedSender<T> {
  private queued: T[] = [];
  private readonly options: BatchedSenderOptions<T>;

  constructor(options: BatchedSenderOptions<T>) {
    this.options = options;
  }

  push(message: T): void {
    if (this.queued.length === 0) setImmediate(() => this.flush());
    const last = this.queued.at(-1);
    const merged = last === undefined ? undefined : this.options.merge?.(last, message);
    if (merged === undefined) this.queued.push(message);
    else this.queued[this.queued.length - 1] = merged;
  }

  private flush(): void {
    const batch = this.queued;
    this.queued = [];
    this.options.write(batch, (err) => {
      if (err) this.options.failed?.(batch, err);
    });
  }
}

/**
 * The timer that commits a store's buffered journal entries when no other commit came first
 * (both SQL stores' journal buffers). It keeps no process alive: an exit without close is a crash.
 */
export class FlushTimer {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly afterMs: number) {}

  /** Calls `flush` in `afterMs`, unless a call is already due. */
  start(flush: () => void): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      flush();
    }, this.afterMs);
    this.timer.unref();
  }

  /** A commit is being made: the one due is not needed. */
  stop(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}

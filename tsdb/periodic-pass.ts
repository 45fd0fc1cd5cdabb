/**
 * A background pass run every `everyMs`, at most one at a time: runOnce() while a pass
 * runs joins it; stop() ends the timer and waits for the pass running. The timer is
 * unref'd (it never keeps the process alive). The pass reports its own errors: a rejection
 * reaches whoever awaits runOnce(), and the timer's runs ignore it.
 */
export class PeriodicPass {
  private readonly pass: () => Promise<void>;
  private readonly everyMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stoppedFlag = false;

  constructor(pass: () => Promise<void>, everyMs: number) {
    this.pass = pass;
    this.everyMs = everyMs;
  }

  /** True once stop() was called: a long pass checks it to end early. */
  get stopped(): boolean {
    return this.stoppedFlag;
  }

  /** Starts the timer (`now`: also runs a pass at once); nothing after stop(). */
  start(opts: { readonly now?: boolean } = {}): void {
    if (this.timer !== undefined || this.stoppedFlag) return;
    if (opts.now === true) this.runOnce().catch(() => undefined);
    this.timer = setInterval(() => void this.runOnce().catch(() => undefined), this.everyMs);
    this.timer.unref();
  }

  /** One pass now (a pass already running is joined). */
  runOnce(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stoppedFlag = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }
}

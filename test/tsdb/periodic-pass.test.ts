import { describe, expect, it } from 'vitest';
import { PeriodicPass } from '../../tsdb/periodic-pass.js';

describe('PeriodicPass', () => {
  it('runs one pass at a time (a second call joins it), and stop() waits for the pass running', async () => {
    let runs = 0;
    let release!: () => void;
    const p = new PeriodicPass(async () => {
      runs++;
      await new Promise<void>((r) => (release = r));
    }, 3_600_000);
    const a = p.runOnce();
    const b = p.runOnce();
    expect(a).toBe(b);
    expect(runs).toBe(1);
    let stopped = false;
    const stopping = p.stop().then(() => (stopped = true));
    expect(p.stopped).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false); // still waiting for the pass
    release();
    await stopping;
    expect(stopped).toBe(true);
    p.start({ now: true }); // nothing after stop()
    expect(runs).toBe(1);
  });

  it('runs at once with now, then on its timer; a failed pass does not stop the next', async () => {
    let runs = 0;
    const p = new PeriodicPass(async () => {
      runs++;
      if (runs === 1) throw new Error('first fails');
    }, 20);
    p.start({ now: true });
    expect(runs).toBe(1);
    await expect.poll(() => runs, { timeout: 2000 }).toBeGreaterThanOrEqual(3);
    await p.stop();
    const after = runs;
    await new Promise((r) => setTimeout(r, 60));
    expect(runs).toBe(after);
  });
});

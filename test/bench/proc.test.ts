/**
 * The process-tree figures of the benchmarks (bench/peers/proc.ts): a server started by
 * `npm start` is a tree (npm, sh, node), and its CPU must count every member, including
 * children that have exited (a build step), once. Its PSS counts the pages the members
 * share (the node binary) once, its RSS once per member.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { processTree, procCpuSeconds, treeCpuSeconds, treePss, treeRss } from '../../bench/peers/proc.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('process tree figures', () => {
  it('counts a live grandchild, then the same CPU once it has exited and been reaped', async () => {
    // parent: spawns a grandchild that burns 0.4 CPU-s, says so, idles 0.5 s and exits;
    // the parent says when it has reaped it, and idles.
    const burn = `for (let u = process.cpuUsage(); u.user + u.system < 400000; u = process.cpuUsage()); process.stdout.write('burned\\n'); setTimeout(() => {}, 500);`;
    const parentCode = `const { spawn } = require('node:child_process');
      const c = spawn(process.execPath, ['-e', ${JSON.stringify(burn)}], { stdio: ['ignore', 'inherit', 'ignore'] });
      c.on('exit', () => { process.stdout.write('reaped\\n'); setTimeout(() => {}, 10000); });`;
    const parent = spawn(process.execPath, ['-e', parentCode], { stdio: ['ignore', 'pipe', 'ignore'] });
    const said = (word: string): Promise<void> => new Promise((r) => {
      let text = '';
      parent.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.includes(word)) r();
      });
    });
    try {
      const burned = said('burned');
      const reaped = said('reaped');
      await burned;
      const tree = processTree(parent.pid!);
      expect(tree[0]).toBe(parent.pid);
      expect(tree).toHaveLength(2);
      const live = treeCpuSeconds(parent.pid!);
      // /proc counts in 10 ms ticks, split between user and system: 0.4 CPU-s can read 0.38.
      expect(live - procCpuSeconds(parent.pid!)).toBeGreaterThanOrEqual(0.35);
      expect(treeRss(parent.pid!)).toBeGreaterThan(2 * 10 * 2 ** 20);
      // Two node processes share the node binary's pages (~40 MiB resident in each).
      expect(treePss(parent.pid!)).toBeGreaterThan(10 * 2 ** 20);
      expect(treePss(parent.pid!)).toBeLessThan(treeRss(parent.pid!) - 15 * 2 ** 20);
      await reaped;
      expect(processTree(parent.pid!)).toEqual([parent.pid]);
      const after = treeCpuSeconds(parent.pid!);
      expect(after).toBeGreaterThanOrEqual(live);
      expect(after - procCpuSeconds(parent.pid!)).toBeGreaterThanOrEqual(0.35);
      expect(after - procCpuSeconds(parent.pid!)).toBeLessThan(0.7);
    } finally {
      parent.kill('SIGKILL');
    }
  }, 30_000);
});

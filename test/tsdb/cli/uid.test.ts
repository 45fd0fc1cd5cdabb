/**
 * `horae uid`: assign, grep, lookup both ways and rename, in OpenTSDB's output format,
 * on a store in a temporary directory; and the command-line errors.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { javaBytes, parseUidCommand } from '../../../tsdb/cli/uid-cmd.js';
import { ArgsError } from '../../../tsdb/cli/args.js';
import { horae, tempDir } from './cli-helpers.js';

describe('horae uid', () => {
  let t: { dir: string; cleanup: () => void };
  let uid: (...args: string[]) => ReturnType<typeof horae>;
  beforeEach(() => {
    t = tempDir();
    const data = join(t.dir, 'data');
    uid = (...args) => horae(['uid', '--data-dir', data, ...args]);
  });
  afterEach(() => t.cleanup());

  it('assigns, greps, looks up and renames', async () => {
    const a = await horae(['uid', 'assign', 'metrics', 'sys.cpu.user', 'sys.mem.free'], { HORAE_DATA_DIR: join(t.dir, 'data') });
    expect(a).toEqual({ code: 0, out: 'metrics sys.cpu.user: [0, 0, 1]\nmetrics sys.mem.free: [0, 0, 2]\n', err: '' });
    expect((await uid('assign', 'tagk', 'host')).out).toBe('tagk host: [0, 0, 1]\n');
    expect((await uid('assign', 'tagv', 'sys.cpu.user')).out).toBe('tagv sys.cpu.user: [0, 0, 1]\n');

    const again = await uid('assign', 'metrics', 'sys.cpu.user', 'sys.disk');
    expect(again.code).toBe(1);
    expect(again.err).toContain('metrics sys.cpu.user: Name already exists with UID: 000001');
    expect(again.out).toBe('metrics sys.disk: [0, 0, 3]\n');

    expect((await uid('grep', 'sys\\.(cpu|mem)')).out).toBe(
      'metrics sys.cpu.user: [0, 0, 1]\ntagv sys.cpu.user: [0, 0, 1]\nmetrics sys.mem.free: [0, 0, 2]\n');
    expect((await uid('grep', 'metrics', 'cpu')).out).toBe('metrics sys.cpu.user: [0, 0, 1]\n');
    expect((await uid('-i', 'grep', 'tagk', 'HOST')).out).toBe('tagk host: [0, 0, 1]\n');
    const none = await uid('grep', 'nothing-like-this');
    expect(none.code).toBe(1);
    expect(none.out).toBe('');

    expect((await uid('metrics', 'sys.mem.free')).out).toBe('metrics sys.mem.free: [0, 0, 2]\n');
    expect((await uid('metrics', '000002')).out).toBe('metrics sys.mem.free: [0, 0, 2]\n');
    expect((await uid('metrics', '2')).out).toBe('metrics sys.mem.free: [0, 0, 2]\n');
    expect((await uid('000001')).out).toBe('metrics sys.cpu.user: [0, 0, 1]\ntagk host: [0, 0, 1]\ntagv sys.cpu.user: [0, 0, 1]\n');
    expect((await uid('sys.cpu.user')).out).toBe('metrics sys.cpu.user: [0, 0, 1]\ntagv sys.cpu.user: [0, 0, 1]\n');
    const missing = await uid('tagk', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("No such name or UID for 'tagk': 'nope'");

    expect((await uid('rename', 'metrics', 'sys.mem.free', 'sys.memory.free')).out).toBe('metrics sys.mem.free -> sys.memory.free\n');
    expect((await uid('metrics', 'sys.mem.free')).code).toBe(1);
    expect((await uid('metrics', '000002')).out).toBe('metrics sys.memory.free: [0, 0, 2]\n');
    const clash = await uid('rename', 'metrics', 'sys.disk', 'sys.cpu.user');
    expect(clash.code).toBe(1);
    expect(clash.err).toContain('Name already exists');
    const unknown = await uid('rename', 'metrics', 'no.such', 'other');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("No such name for 'metrics': 'no.such'");

    expect((await horae(['mkmetric', '--data-dir', join(t.dir, 'data'), 'new.one'])).out).toBe('metrics new.one: [0, 0, 4]\n');
  });

  it('refuses invalid names and kinds', async () => {
    const bad = await uid('assign', 'metrics', 'has space');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('Invalid metric name ("has space")');
    const kind = await uid('assign', 'metric-ish', 'x');
    expect(kind.code).toBe(2);
    expect(kind.err).toContain("unknown UID kind 'metric-ish'");
  });

  it('does not create a store where there is none', async () => {
    const r = await horae(['uid', '--data-dir', join(t.dir, 'absent'), 'grep', 'x']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('no store at');
  });
});

describe('uid command line', () => {
  it('parses every form and rejects malformed ones', () => {
    expect(parseUidCommand(['grep', 'a.*'])).toMatchObject({ cmd: 'grep', re: /a.*/ });
    expect(parseUidCommand(['grep', 'tagv', 'x'], true)).toMatchObject({ cmd: 'grep', kind: 'tagv', re: /x/i });
    expect(parseUidCommand(['assign', 'metric', 'a', 'b'])).toEqual({ cmd: 'assign', kind: 'metric', names: ['a', 'b'] });
    expect(parseUidCommand(['rename', 'tagk', 'a', 'b'])).toEqual({ cmd: 'rename', kind: 'tagk', from: 'a', to: 'b' });
    expect(parseUidCommand(['tagk', 'host'])).toEqual({ cmd: 'lookup', kind: 'tagk', arg: 'host' });
    expect(parseUidCommand(['host'])).toEqual({ cmd: 'lookup', arg: 'host' });
    for (const bad of [[], ['grep'], ['grep', '('], ['assign', 'metrics'], ['rename', 'metrics', 'a'], ['a', 'b', 'c'], ['kind', 'x']]) {
      expect(() => parseUidCommand(bad), bad.join(' ')).toThrow(ArgsError);
    }
  });

  it('prints UIDs as Java prints a byte[]', () => {
    expect(javaBytes(Uint8Array.of(0, 0, 1))).toBe('[0, 0, 1]');
    expect(javaBytes(Uint8Array.of(0, 127, 128, 198, 255))).toBe('[0, 127, -128, -58, -1]');
  });
});

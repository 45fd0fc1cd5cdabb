import { describe, expect, it } from 'vitest';
import { ErrorFileSystem } from '../../core/fs/error-fs.js';
import { MemFileSystem } from '../../core/fs/mem-fs.js';
import { fsContract } from '../helpers/fs-contract.js';

fsContract('error(mem) without rules', {
  async create() {
    const mem = new MemFileSystem();
    await mem.mkdir('/root');
    return { fs: new ErrorFileSystem(mem), root: '/root', cleanup: async () => undefined };
  },
});

async function setup(): Promise<{ mem: MemFileSystem; efs: ErrorFileSystem }> {
  const mem = new MemFileSystem();
  await mem.mkdir('/d');
  const w = await mem.openAppend('/d/existing');
  await w.append(new Uint8Array([1, 2, 3]));
  await w.close();
  return { mem, efs: new ErrorFileSystem(mem) };
}

describe('ErrorFileSystem', () => {
  it('injects Node-like errors for each op kind', async () => {
    const { efs } = await setup();
    const cases: [string, () => Promise<unknown>, string][] = [
      ['mkdir', () => efs.mkdir('/d/x'), 'mkdir'],
      ['list', () => efs.list('/d'), 'scandir'],
      ['openAppend', () => efs.openAppend('/d/f'), 'open'],
      ['openRead', () => efs.openRead('/d/existing'), 'open'],
      ['read', () => efs.readFile('/d/existing'), 'read'],
      ['rename', () => efs.rename('/d/existing', '/d/other'), 'rename'],
      ['remove', () => efs.remove('/d/existing'), 'unlink'],
      ['removeDir', () => efs.removeDir('/d'), 'rm'],
      ['syncDir', () => efs.syncDir('/d'), 'fsync'],
      ['lock', () => efs.lock('/d/LOCK'), 'open'],
    ];
    for (const [op, call, syscall] of cases) {
      const rule = efs.inject({ ops: op as never, code: 'EIO' });
      const err = await call().then(() => undefined, (e: unknown) => e as NodeJS.ErrnoException);
      expect(err, op).toBeInstanceOf(Error);
      expect(err?.code, op).toBe('EIO');
      expect(err?.syscall, op).toBe(syscall);
      expect(err?.path, op).toMatch(/^\/d/);
      expect(err?.message, op).toMatch(/^EIO: i\/o error \(injected\)/);
      expect(rule.fired, op).toBe(1);
      efs.clearRules();
    }
    // Nothing reached the inner file system.
    expect(await efs.exists('/d/existing')).toBe(true);
    expect(await efs.exists('/d/f')).toBe(false);
    expect(efs.injected()).toBe(cases.length);
    expect(efs.injected('mkdir')).toBe(1);
  });

  it('fails appends, syncs and reads on opened files without touching the inner file', async () => {
    const { mem, efs } = await setup();
    const w = await efs.openAppend('/d/f');
    await efs.syncDir('/d');
    efs.inject({ ops: 'append', code: 'ENOSPC', times: 1 });
    await expect(w.append(new Uint8Array([9]))).rejects.toMatchObject({ code: 'ENOSPC', syscall: 'write', path: '/d/f' });
    expect(await mem.size('/d/f')).toBe(0);
    await w.append(new Uint8Array([7])); // times: 1 is used up
    efs.inject({ ops: ['sync'], code: 'EIO' });
    await expect(w.sync()).rejects.toMatchObject({ code: 'EIO', syscall: 'fdatasync' });
    expect(mem.syncedSize('/d/f')).toBe(0); // the failed sync made nothing durable
    const r = await efs.openRead('/d/existing');
    efs.inject({ ops: 'read', code: 'EIO' });
    expect(() => r.readSync(0, 1)).toThrow(expect.objectContaining({ code: 'EIO', syscall: 'read' }));
    efs.clearRules();
    expect([...r.readSync(0, 3)]).toEqual([1, 2, 3]);
    await w.sync();
    expect(mem.syncedSize('/d/f')).toBe(1);
  });

  it('matches paths by substring or predicate; rename matches either path', async () => {
    const { efs } = await setup();
    efs.inject({ ops: 'openAppend', path: '.log', code: 'EACCES' });
    await expect(efs.openAppend('/d/000001.log')).rejects.toMatchObject({ code: 'EACCES' });
    await (await efs.openAppend('/d/000001.sst')).close();
    efs.clearRules();
    efs.inject({ ops: 'openAppend', path: (p) => p.endsWith('.sst'), code: 'EROFS' });
    await expect(efs.openAppend('/d/000002.sst')).rejects.toMatchObject({ code: 'EROFS' });
    await (await efs.openAppend('/d/000002.log')).close();
    efs.clearRules();
    efs.inject({ ops: 'rename', path: 'CURRENT', code: 'EIO' });
    await expect(efs.rename('/d/existing', '/d/CURRENT')).rejects.toMatchObject({ code: 'EIO' });
    await efs.rename('/d/existing', '/d/other');
  });

  it('lets `after` calls through and fails `times` calls', async () => {
    const { efs } = await setup();
    const w = await efs.openAppend('/d/f');
    const rule = efs.inject({ ops: 'sync', code: 'EIO', after: 2, times: 2 });
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) outcomes.push(await w.sync().then(() => 'ok', (e: { code: string }) => e.code));
    expect(outcomes).toEqual(['ok', 'ok', 'EIO', 'EIO', 'ok', 'ok']);
    expect(rule.fired).toBe(2);
    expect(efs.calls('sync')).toBe(6);
    expect(efs.injected('sync')).toBe(2);
  });

  it('stops a removed rule and resets counters', async () => {
    const { efs } = await setup();
    const rule = efs.inject({ ops: 'list', code: 'EIO' });
    await expect(efs.list('/d')).rejects.toMatchObject({ code: 'EIO' });
    rule.remove();
    expect(await efs.list('/d')).toEqual(['existing']);
    expect(efs.calls('list')).toBe(2);
    efs.resetCounters();
    expect(efs.calls()).toBe(0);
    expect(efs.injected()).toBe(0);
  });

  it('passes through when no rule matches', async () => {
    const { efs } = await setup();
    efs.inject({ ops: 'remove', path: 'nomatch', code: 'EIO' });
    await efs.remove('/d/existing');
    expect(await efs.exists('/d/existing')).toBe(false);
    expect(efs.injected()).toBe(0);
  });

  it('beforeCall runs its function just before the nth call, and a rule it injects fails that call', async () => {
    const { efs } = await setup();
    await efs.list('/d'); // calls before beforeCall do not count
    const seen: string[] = [];
    efs.beforeCall(3, () => {
      seen.push(`fired after ${efs.calls()} calls`);
      efs.inject({ ops: ['read', 'list'], code: 'EIO' });
    });
    await efs.list('/d');
    await efs.readFile('/d/existing');
    expect(seen).toEqual([]);
    const err = await efs.readFile('/d/existing').then(() => undefined, (e: unknown) => e as NodeJS.ErrnoException);
    expect(seen).toEqual(['fired after 3 calls']);
    expect(err?.code).toBe('EIO');
    // It fires once.
    await efs.list('/d').catch(() => undefined);
    expect(seen.length).toBe(1);
    expect(() => efs.beforeCall(0, () => undefined)).toThrow(RangeError);
  });
});

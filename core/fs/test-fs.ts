/**
 * The test-only file-system layers a server process can be started with, chosen by its
 * environment (the composition root passes process.env):
 *
 *   HORAE_TEST_FS=lazy             LazyFileSystem: unsynced bytes stay in process memory,
 *                                  so SIGKILL loses exactly them (power loss in a process)
 *   HORAE_TEST_FS=quota            QuotaFileSystem: ENOSPC under a byte budget read from
 *                                  the file named by HORAE_TEST_FS_QUOTA_FILE
 *   HORAE_TEST_FS=lazy,quota       both (the quota sees bytes when they are synced)
 *
 * Unset (always, in production) means the real file system, with flushes and compactions
 * on a worker thread. With a test layer the jobs run on the main thread, since a worker
 * cannot see the wrapper. Nothing else in Horae reads these variables.
 */
import type { FileSystem } from './fs.js';
import { LazyFileSystem } from './lazy-fs.js';
import { QuotaFileSystem } from './quota-fs.js';

export const TEST_FS_LAYERS = ['lazy', 'quota'] as const;
export type TestFsLayer = (typeof TEST_FS_LAYERS)[number];

export type TestFsEnv = Readonly<Record<string, string | undefined>>;

/** The layers HORAE_TEST_FS names; throws a RangeError for an unknown one. */
export function testFsLayers(env: TestFsEnv): TestFsLayer[] {
  const raw = env.HORAE_TEST_FS?.trim() ?? '';
  if (raw === '') return [];
  const out: TestFsLayer[] = [];
  for (const w of raw.split(',').map((s) => s.trim())) {
    if (!(TEST_FS_LAYERS as readonly string[]).includes(w)) {
      throw new RangeError(`HORAE_TEST_FS: unknown layer '${w}' (test only; known: ${TEST_FS_LAYERS.join(', ')})`);
    }
    out.push(w as TestFsLayer);
  }
  return out;
}

/**
 * The file system for a store in `dir` as the environment asks, or undefined for the
 * default (the real one). `base` is the real file system to wrap.
 */
export function testFileSystem(env: TestFsEnv, dir: string, base: FileSystem): FileSystem | undefined {
  const layers = testFsLayers(env);
  if (layers.length === 0) return undefined;
  let fs = base;
  if (layers.includes('quota')) {
    const controlPath = env.HORAE_TEST_FS_QUOTA_FILE;
    if (controlPath === undefined || controlPath === '') throw new RangeError('HORAE_TEST_FS=quota needs HORAE_TEST_FS_QUOTA_FILE');
    fs = new QuotaFileSystem(fs, { root: dir, controlPath });
  }
  if (layers.includes('lazy')) fs = new LazyFileSystem(fs);
  return fs;
}

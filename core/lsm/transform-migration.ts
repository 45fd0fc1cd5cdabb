/**
 * Finishes a row transform's arrival on its own: when `Store.setFamilyTransform` names a
 * transform on a family with files already written (TableState.transformFrom), those files
 * are rewritten through it by compactions started here, one at a time, each followed by a
 * pause that keeps the average at most `transformMigrationBytesPerSec` of input, until no
 * such file is left; then the table's mark is cleared (and the manifest saved).
 *
 * A region's compaction takes the contiguous run of its files from its newest old file to
 * its oldest (compactions merge contiguous runs only, core/README.md "Row transforms"),
 * major when that run is every file. Regions compacting or splitting are passed over until
 * the next step. Tables whose transforms are not all registered in this process wait (a
 * rewrite without them changes nothing).
 *
 * Owns: whether a migration step is running or pausing, and its timer.
 */
import type { Background } from './background.js';
import type { FileMeta } from './file-meta.js';
import { transformSpecs } from './job-plans.js';
import type { Region, TableState } from './region.js';
import type { RegionJobs } from './region-jobs.js';
import type { VersionSet } from './version-set.js';

export interface MigrationDeps {
  readonly bytesPerSec: number;
  readonly versions: VersionSet;
  readonly background: Background;
  readonly halted: () => boolean;
  readonly jobsOf: (r: Region) => RegionJobs;
  /** Starts the compaction of `inputs` of r; resolves when it is installed (or failed). */
  readonly compact: (r: Region, inputs: FileMeta[], major: boolean) => Promise<void>;
}

/** Files still to be rewritten through their table's transforms, and their bytes. */
export interface TransformBacklog {
  readonly files: number;
  readonly bytes: number;
}

/** The files of region r written before its table's current transforms. */
export function oldFiles(r: Region): FileMeta[] {
  const from = r.table.transformFrom;
  return from === undefined ? [] : r.files.filter((f) => f.number < from);
}

export class TransformMigration {
  private readonly d: MigrationDeps;
  /** A step's compaction runs, or its pause has not ended. */
  private busy = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(deps: MigrationDeps) {
    this.d = deps;
  }

  /** What is left to rewrite, over every table (a file shared by split children counted once). */
  backlog(): TransformBacklog {
    const seen = new Set<number>();
    let bytes = 0;
    for (const t of this.d.versions.tables.values()) {
      for (const r of t.regions) {
        for (const f of oldFiles(r)) {
          if (seen.has(f.number)) continue;
          seen.add(f.number);
          bytes += f.sizeBytes;
        }
      }
    }
    return { files: seen.size, bytes };
  }

  /** Starts the next rewrite unless one runs or pauses (called by the maintenance pass and after each step). */
  step(): void {
    if (this.busy || this.d.bytesPerSec <= 0 || this.d.halted()) return;
    for (const t of this.d.versions.tables.values()) {
      if (t.transformFrom === undefined || !this.transformsLoaded(t)) continue;
      let left = false;
      for (const r of t.regions) {
        const old = oldFiles(r);
        if (r.retired || old.length === 0) continue;
        left = true;
        const j = this.d.jobsOf(r);
        if (j.compacting || j.splitting) continue;
        const from = r.files.indexOf(old[0]!);
        const to = r.files.indexOf(old[old.length - 1]!) + 1;
        this.run(r, r.files.slice(from, to), to - from === r.files.length);
        return;
      }
      if (!left) {
        t.transformFrom = undefined;
        this.d.background.track(this.d.versions.saveManifest());
      }
    }
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Every family naming a transform has it registered here. */
  private transformsLoaded(t: TableState): boolean {
    const named = t.spec.families.filter((f) => f.transform !== undefined).length;
    return named > 0 && (transformSpecs(t)?.length ?? 0) === named;
  }

  private run(r: Region, inputs: FileMeta[], major: boolean): void {
    this.busy = true;
    let bytes = 0;
    for (const f of inputs) bytes += f.sizeBytes;
    const started = Date.now();
    this.d.background.counters.transformMigrations++;
    this.d.background.track(this.d.compact(r, inputs, major).finally(() => {
      // The pause makes the average rate at most bytesPerSec, counting the compaction's own time.
      const pauseMs = Math.max(0, (bytes * 1000) / this.d.bytesPerSec - (Date.now() - started));
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.busy = false;
        this.step();
      }, pauseMs);
      this.timer.unref();
    }));
  }
}

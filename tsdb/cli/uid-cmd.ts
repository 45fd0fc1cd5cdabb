/**
 * `horae uid`: OpenTSDB's uid tool on Horae's UID table.
 *
 *   grep [KIND] REGEX       names containing a match (JavaScript regex; -i ignores case)
 *   assign KIND NAME...     new UIDs (a name that already has one is an error)
 *   rename KIND OLD NEW     keeps the UID
 *   [KIND] NAME|UID         lookup both ways; a UID is hex of the kind's width (as the
 *                           HTTP API prints it) or a decimal number (as OpenTSDB's tool)
 *
 * Output is OpenTSDB's: `metrics sys.cpu.user: [0, 0, 1]` (the UID as Java prints a
 * byte[], so bytes above 127 are negative), and `metrics old -> new` for a rename.
 * Exit status: 0 on success (grep: at least one match), 1 when nothing was found or a
 * name was refused, 2 for a malformed command line.
 */
import { isTsdbError } from '../errors.js';
import type { Tsdb } from '../tsdb.js';
import { UID_KINDS, UID_QUALIFIER, parseUidKind } from '../uid/uid-kind.js';
import type { UidKind } from '../uid/uid-kind.js';
import { encodeId, idKey } from '../uid/uid-table.js';
import type { UidTable } from '../uid/uid-table.js';
import { checkName } from '../write/data-point.js';
import { ArgsError } from './args.js';
import type { CliWriter } from './progress.js';

export interface UidIo {
  readonly stdout: CliWriter;
  readonly stderr: CliWriter;
}

/** A UID as Java's Arrays.toString(byte[]) prints it: `[0, 0, -58]`. */
export function javaBytes(id: Uint8Array): string {
  return `[${Array.from(id, (b) => (b > 127 ? b - 256 : b)).join(', ')}]`;
}

function line(kind: UidKind, name: string, id: Uint8Array): string {
  return `${UID_QUALIFIER[kind]} ${name}: ${javaBytes(id)}\n`;
}

function kindArg(s: string): UidKind {
  const k = parseUidKind(s);
  if (k === undefined) throw new ArgsError(`unknown UID kind '${s}': expected metrics, tagk or tagv`);
  return k;
}

const NAME_WHAT: Readonly<Record<UidKind, string>> = { metric: 'metric name', tagk: 'tag name', tagv: 'tag value' };

/** A parsed `horae uid` command line. */
export type UidCommand =
  | { readonly cmd: 'grep'; readonly kind?: UidKind; readonly re: RegExp }
  | { readonly cmd: 'assign'; readonly kind: UidKind; readonly names: readonly string[] }
  | { readonly cmd: 'rename'; readonly kind: UidKind; readonly from: string; readonly to: string }
  | { readonly cmd: 'lookup'; readonly kind?: UidKind; readonly arg: string };

/** Parses `horae uid ARGS` (options already removed). Throws ArgsError for bad usage. */
export function parseUidCommand(args: readonly string[], ignoreCase = false): UidCommand {
  const [cmd, ...rest] = args;
  switch (cmd) {
    case undefined:
      throw new ArgsError('uid needs a command');
    case 'grep': {
      if (rest.length < 1 || rest.length > 2) throw new ArgsError('usage: uid grep [KIND] REGEX');
      let re: RegExp;
      try {
        re = new RegExp(rest[rest.length - 1]!, ignoreCase ? 'i' : '');
      } catch (err) {
        throw new ArgsError(`invalid regular expression: ${(err as Error).message}`);
      }
      return rest.length === 2 ? { cmd, kind: kindArg(rest[0]!), re } : { cmd, re };
    }
    case 'assign':
      if (rest.length < 2) throw new ArgsError('usage: uid assign KIND NAME...');
      return { cmd, kind: kindArg(rest[0]!), names: rest.slice(1) };
    case 'rename':
      if (rest.length !== 3) throw new ArgsError('usage: uid rename KIND OLD NEW');
      return { cmd, kind: kindArg(rest[0]!), from: rest[1]!, to: rest[2]! };
    default:
      if (args.length > 2) throw new ArgsError(`unknown uid command '${cmd}'`);
      return args.length === 2 ? { cmd: 'lookup', kind: kindArg(cmd), arg: args[1]! } : { cmd: 'lookup', arg: cmd };
  }
}

/** Runs a parsed `horae uid` command; returns the exit status. */
export async function runUidCommand(tsdb: Tsdb, c: UidCommand, io: UidIo): Promise<number> {
  try {
    switch (c.cmd) {
      case 'grep':
        return await grep(tsdb, c.kind, c.re, io);
      case 'assign':
        return await assign(tsdb.uidTable(c.kind), c.names, tsdb.config.allowSpecialChars, io);
      case 'rename':
        checkName(NAME_WHAT[c.kind], c.to, tsdb.config.allowSpecialChars);
        await tsdb.renameUid(c.kind, c.from, c.to);
        io.stdout.write(`${UID_QUALIFIER[c.kind]} ${c.from} -> ${c.to}\n`);
        return 0;
      case 'lookup':
        return await lookup(tsdb, c.kind, c.arg, io);
    }
  } catch (err) {
    if (!isTsdbError(err)) throw err;
    io.stderr.write(`horae uid: ${err.message}\n`);
    return 1;
  }
}

async function grep(tsdb: Tsdb, kind: UidKind | undefined, re: RegExp, io: UidIo): Promise<number> {
  const found: Array<{ kind: UidKind; name: string; key: Buffer; id: Uint8Array }> = [];
  for (const k of kind === undefined ? UID_KINDS : [kind]) {
    for (const [name, id] of await tsdb.uidTable(k).grep(re)) found.push({ kind: k, name, key: Buffer.from(name, 'utf8'), id });
  }
  // The order of OpenTSDB's scan: by name (row key), then by kind (qualifier).
  found.sort((a, b) => Buffer.compare(a.key, b.key) || UID_KINDS.indexOf(a.kind) - UID_KINDS.indexOf(b.kind));
  for (const f of found) io.stdout.write(line(f.kind, f.name, f.id));
  return found.length > 0 ? 0 : 1;
}

async function assign(table: UidTable, names: readonly string[], specialChars: string, io: UidIo): Promise<number> {
  let rc = 0;
  for (const name of names) {
    try {
      checkName(NAME_WHAT[table.kind], name, specialChars);
      const existing = await table.getId(name);
      if (existing !== undefined) {
        io.stderr.write(`horae uid: ${UID_QUALIFIER[table.kind]} ${name}: Name already exists with UID: ${idKey(existing)}\n`);
        rc = 1;
        continue;
      }
      io.stdout.write(line(table.kind, name, await table.getOrCreateId(name)));
    } catch (err) {
      if (!isTsdbError(err)) throw err;
      io.stderr.write(`horae uid: ${UID_QUALIFIER[table.kind]} ${name}: ${err.message}\n`);
      rc = 1;
    }
  }
  return rc;
}

/** `s` as a UID of `table`'s width: hex of exactly 2 × width digits, or a decimal id. */
export function parseUidArg(s: string, table: UidTable): Uint8Array | undefined {
  if (s.length === 2 * table.width && /^[0-9a-fA-F]+$/.test(s)) return Uint8Array.from(Buffer.from(s, 'hex'));
  if (/^\d{1,16}$/.test(s)) {
    const n = Number(s);
    if (n >= 1 && n <= table.maxId) return encodeId(n, table.width);
  }
  return undefined;
}

async function lookup(tsdb: Tsdb, kind: UidKind | undefined, arg: string, io: UidIo): Promise<number> {
  const kinds = kind === undefined ? UID_KINDS : [kind];
  let found = 0;
  for (const k of kinds) {
    const table = tsdb.uidTable(k);
    const id = parseUidArg(arg, table);
    if (id !== undefined) {
      const name = await table.getName(id);
      if (name !== undefined) {
        io.stdout.write(line(k, name, id));
        found++;
      }
    }
    const byName = await table.getId(arg);
    if (byName !== undefined) {
      io.stdout.write(line(k, arg, byName));
      found++;
    }
  }
  if (found > 0) return 0;
  const what = kinds.map((k) => UID_QUALIFIER[k]).join('|');
  io.stderr.write(`horae uid: No such name or UID for '${what}': '${arg}'\n`);
  return 1;
}

/**
 * The config file: OpenTSDB's Java-properties format (`key = value`, `key: value` or
 * `key value`; `#` and `!` comment lines; a trailing backslash continues the line; the
 * escapes \t \n \r \f \uXXXX; the last occurrence of a key wins).
 *
 * Keys are those of the config table (tsdb/config-keys.ts): each setting's `horae.*` name
 * and its aliases (OpenTSDB's names, so opentsdb.conf can be used as is, and old Horae
 * names). Unknown keys outside `horae.*` are warnings (OpenTSDB configs carry many keys
 * Horae has no use for); unknown `horae.*` keys and bad values are errors naming
 * file:line. Deprecated keys (config-keys.ts DEPRECATED_KEYS) are warnings and converted to
 * what replaced them, unless that is set itself. Relative paths (horae.data_dir, horae.auth.tokens_file) are taken relative
 * to the config file's directory. parseValue also parses command-line and environment
 * values (args.ts), so every source gives the same errors.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { CONFIG_KEYS, DEPRECATED_KEYS, FIXED_OPENTSDB_KEYS, describeType, resolveTsdbConfig } from '../config.js';
import type { DeprecatedEffect } from '../config-keys.js';
import type { ConfigField, KeyDef, ServerSettings, StoreSettings, TsdbConfig } from '../config.js';

export type MutableTsdbConfig = { -readonly [K in keyof TsdbConfig]?: TsdbConfig[K] };
export type { StoreSettings };

/** What a config file sets; settings it does not mention are absent. */
export interface ParsedConfigFile {
  readonly server: { -readonly [K in keyof ServerSettings]?: ServerSettings[K] };
  readonly tsdb: MutableTsdbConfig;
  /** Storage engine settings (horae.storage.*). */
  readonly store: StoreSettings;
  /** `file:line: …` for keys that were ignored. */
  readonly warnings: string[];
}

/** A bad config file, command line or environment variable (exit status 2). */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

// ---- values: each parser throws Error(message) on a bad value -------------------------

export function parseIntValue(raw: string, lo: number, hi: number): number {
  const s = raw.trim();
  const n = /^[+-]?\d+$/.test(s) ? Number(s) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < lo || n > hi) throw new Error(`expected an integer in ${lo}..${hi}, got '${s}'`);
  return n;
}

export function parseBoolValue(raw: string): boolean {
  const s = raw.trim().toLowerCase();
  if (s === 'true' || s === 'yes' || s === '1') return true;
  if (s === 'false' || s === 'no' || s === '0') return false;
  throw new Error(`expected true or false, got '${raw.trim()}'`);
}

/**
 * A value of `def` from text. `baseDir` (config files only) resolves relative paths;
 * without it a path stays as given (relative to the working directory).
 */
export function parseValue(def: KeyDef, raw: string, baseDir?: string): string | number | boolean {
  switch (def.type) {
    case 'int': return parseIntValue(raw, def.min, def.max);
    case 'bool': return parseBoolValue(raw);
    case 'enum': {
      const s = raw.trim();
      if (!def.values.includes(s)) throw new Error(`expected ${describeType(def)}, got '${s}'`);
      return s;
    }
    case 'text': {
      const s = def.trim === true || def.required === true ? raw.trim() : raw;
      if (def.required === true && s === '') throw new Error('expected a value');
      return s;
    }
    case 'path': {
      const s = raw.trim();
      if (s === '') {
        if (def.required === true) throw new Error('expected a path');
        return '';
      }
      return baseDir === undefined ? s : resolve(baseDir, s);
    }
  }
}

/** Every name a config file may use → the setting's field. */
const KEY_INDEX: ReadonlyMap<string, ConfigField> = (() => {
  const m = new Map<string, ConfigField>();
  for (const [field, def] of Object.entries(CONFIG_KEYS) as Array<[ConfigField, KeyDef]>) {
    for (const name of [def.key, ...(def.aliases ?? [])]) {
      if (m.has(name)) throw new Error(`config table: ${name} names both ${m.get(name)!} and ${field}`);
      m.set(name, field);
    }
  }
  return m;
})();

/** The field a config-file key sets, or undefined. */
export function fieldOfKey(key: string): ConfigField | undefined {
  return KEY_INDEX.get(key);
}

/** Puts a parsed value where its part reads it. */
export function assignSetting(out: ParsedConfigFile, field: ConfigField, value: string | number | boolean): void {
  const part = CONFIG_KEYS[field].part;
  const target = part === 'server' ? out.server : part === 'store' ? out.store : out.tsdb;
  (target as Record<string, unknown>)[field] = value;
}

/** OpenTSDB keys a config file may set to true or false with no effect (config-keys.ts). */
const ACCEPTED_FIXED: ReadonlySet<string> = new Set(FIXED_OPENTSDB_KEYS.filter((k) => 'accepted' in k).map((k) => k.key));

// ---- parsing ---------------------------------------------------------------------------

/** One `key = value` of a properties file, with the line it starts on. */
export interface PropertyEntry {
  readonly key: string;
  readonly value: string;
  readonly line: number;
}

/** Splits Java-properties text into entries (escapes resolved, comments dropped). */
export function parseProperties(text: string): PropertyEntry[] {
  const lines = text.split(/\r\n|\n|\r/);
  const out: PropertyEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const startLine = i + 1;
    let logical = lines[i]!.replace(/^[ \t\f]+/, '');
    if (logical.length === 0 || logical[0] === '#' || logical[0] === '!') continue;
    while (endsWithContinuation(logical) && i + 1 < lines.length) {
      logical = logical.slice(0, -1) + lines[++i]!.replace(/^[ \t\f]+/, '');
    }
    if (endsWithContinuation(logical)) logical = logical.slice(0, -1);
    // Key: up to the first unescaped '=', ':' or whitespace.
    let k = 0;
    while (k < logical.length && !/[=: \t\f]/.test(logical[k]!)) k += logical[k] === '\\' ? 2 : 1;
    const key = unescape(logical.slice(0, k));
    let v = k;
    while (v < logical.length && /[ \t\f]/.test(logical[v]!)) v++;
    if (v < logical.length && (logical[v] === '=' || logical[v] === ':')) v++;
    while (v < logical.length && /[ \t\f]/.test(logical[v]!)) v++;
    out.push({ key, value: unescape(logical.slice(v)), line: startLine });
  }
  return out;
}

function endsWithContinuation(s: string): boolean {
  let n = 0;
  for (let i = s.length - 1; i >= 0 && s[i] === '\\'; i--) n++;
  return n % 2 === 1;
}

function unescape(s: string): string {
  if (!s.includes('\\')) return s;
  return s.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_m, c: string) => {
    if (c.length === 5) return String.fromCharCode(parseInt(c.slice(1), 16));
    return c === 't' ? '\t' : c === 'n' ? '\n' : c === 'r' ? '\r' : c === 'f' ? '\f' : c;
  });
}

/**
 * Parses config text. `file` names it in messages; relative paths in it are taken
 * relative to `dirname(file)`. Throws ConfigError listing every bad line.
 */
export function parseConfigText(text: string, file: string): ParsedConfigFile {
  const out: ParsedConfigFile = { server: {}, tsdb: {}, store: {}, warnings: [] };
  const errors: string[] = [];
  const baseDir = dirname(resolve(file));
  const deprecated: DeprecatedEffect[] = [];
  for (const e of parseProperties(text)) {
    const field = KEY_INDEX.get(e.key);
    const old = field === undefined ? DEPRECATED.get(e.key) : undefined;
    if (old !== undefined) {
      try {
        deprecated.push(old.effect(parseIntValue(e.value, 0, 1e12)));
        out.warnings.push(`${file}:${e.line}: ${e.key} is deprecated (${old.help})`);
      } catch (err) {
        errors.push(`${file}:${e.line}: ${e.key}: ${(err as Error).message}`);
      }
      continue;
    }
    if (field === undefined && !ACCEPTED_FIXED.has(e.key)) {
      if (e.key.startsWith('horae.')) errors.push(`${file}:${e.line}: unknown key ${e.key}`);
      else out.warnings.push(`${file}:${e.line}: ${e.key} is not used by Horae; ignored`);
      continue;
    }
    try {
      if (field !== undefined) assignSetting(out, field, parseValue(CONFIG_KEYS[field], e.value, baseDir));
      else parseBoolValue(e.value);
    } catch (err) {
      errors.push(`${file}:${e.line}: ${e.key}: ${(err as Error).message}`);
    }
  }
  applyDeprecated(out.tsdb, deprecated);
  // As in OpenTSDB, the bucket count means nothing without a salt.
  if (out.tsdb.saltWidth === 0) out.tsdb.saltBuckets = 1;
  if (errors.length === 0) {
    try {
      resolveTsdbConfig(out.tsdb);
    } catch (err) {
      errors.push(`${file}: ${(err as Error).message}`);
    }
  }
  if (errors.length > 0) throw new ConfigError(errors);
  return out;
}

const DEPRECATED = new Map(DEPRECATED_KEYS.map((d) => [d.key, d]));

/** What deprecated keys set, where the keys that replaced them are not set: the largest catalog bytes, the last switch. */
function applyDeprecated(tsdb: MutableTsdbConfig, effects: readonly DeprecatedEffect[]): void {
  const setBytes = tsdb.catalogMemoryBytes !== undefined;
  const setLast = tsdb.queryLastCache !== undefined;
  for (const d of effects) {
    if (!setBytes && d.catalogMemoryBytes !== undefined) {
      tsdb.catalogMemoryBytes = Math.min(CONFIG_KEYS.catalogMemoryBytes.max, Math.max(tsdb.catalogMemoryBytes ?? 0, d.catalogMemoryBytes, CONFIG_KEYS.catalogMemoryBytes.min));
    }
    if (!setLast && d.queryLastCache !== undefined) tsdb.queryLastCache = d.queryLastCache;
  }
}

/** Reads and parses a config file. Throws ConfigError (also when it cannot be read). */
export function loadConfigFile(file: string): ParsedConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`cannot read config file ${file}: ${(err as Error).message}`]);
  }
  return parseConfigText(text, file);
}

/**
 * TsdbConfig and the other settings objects, derived from the config table
 * (config-keys.ts): their types (mapped from the table's entries), their defaults, the
 * validator of typed values, and the key → string map GET /api/config answers. String
 * values (config file, command line, environment) are parsed by tsdb/cli/config-file.ts.
 */
import { CONFIG_KEYS, FIXED_OPENTSDB_KEYS, defaultDecodeThreads } from './config-keys.js';
import { parseRetention } from './compact/retention.js';
import type { ConfigPart, KeyDef } from './config-keys.js';

export { CONFIG_KEYS, CONFIG_PARTS, DEPRECATED_KEYS, FIXED_OPENTSDB_KEYS } from './config-keys.js';
export type { ConfigPart, KeyDef } from './config-keys.js';
export { defaultDecodeThreads };

type Keys = typeof CONFIG_KEYS;
/** Every setting's field name. */
export type ConfigField = keyof Keys;
/** The TypeScript type of a table entry's values. */
type ValueOf<D> = D extends { readonly type: 'int' } ? number
  : D extends { readonly type: 'bool' } ? boolean
    : D extends { readonly type: 'enum'; readonly values: readonly (infer V)[] } ? V
      : string;
type FieldsOf<P extends ConfigPart> = { [K in ConfigField]: Keys[K]['part'] extends P ? K : never }[ConfigField];

export type ServerField = FieldsOf<'server'>;
export type StoreField = FieldsOf<'store'>;
export type TsdbField = Exclude<ConfigField, ServerField | StoreField>;
export type ConfigValue<F extends ConfigField> = ValueOf<Keys[F]>;

/** Every knob of the time-series layer (the table's entries of the parts but server and store). */
export type TsdbConfig = { readonly [K in TsdbField]: ConfigValue<K> };
/** Where `horae` listens and where its store is. */
export type ServerSettings = { readonly [K in ServerField]: ConfigValue<K> };
/** The embedded store's options that were set (absent: the engine's default). */
export type StoreSettings = { -readonly [K in StoreField]?: number };

const FIELDS = Object.keys(CONFIG_KEYS) as ConfigField[];
const defOf = (f: ConfigField): KeyDef => CONFIG_KEYS[f];
const isTsdbPart = (p: ConfigPart): boolean => p !== 'server' && p !== 'store';

export const TSDB_FIELDS: readonly TsdbField[] = FIELDS.filter((f) => isTsdbPart(defOf(f).part)) as TsdbField[];
export const SERVER_FIELDS: readonly ServerField[] = FIELDS.filter((f) => defOf(f).part === 'server') as ServerField[];
export const STORE_FIELDS: readonly StoreField[] = FIELDS.filter((f) => defOf(f).part === 'store') as StoreField[];

function defaultsOf<F extends ConfigField>(fields: readonly F[]): { [K in F]: ConfigValue<K> } {
  return Object.fromEntries(fields.map((f) => [f, defOf(f).default])) as { [K in F]: ConfigValue<K> };
}

export const DEFAULT_TSDB_CONFIG: TsdbConfig = defaultsOf(TSDB_FIELDS);
export const DEFAULT_SERVER_SETTINGS: ServerSettings = defaultsOf(SERVER_FIELDS);

/** What a config table entry accepts, in words: "an integer in 1..7", "sync or buffered". */
export function describeType(def: KeyDef): string {
  switch (def.type) {
    case 'int': return `an integer in ${def.min}..${def.max}`;
    case 'bool': return 'true or false';
    case 'enum': return def.values.length <= 2 ? def.values.join(' or ') : `${def.values.slice(0, -1).join(', ')} or ${def.values.at(-1)!}`;
    case 'text': return def.required === true ? 'a non-empty text' : 'a text';
    case 'path': return def.required === true ? 'a path' : 'a path (empty: none)';
  }
}

/** Undefined when `v` is a valid value of `def`, else what is wrong ("must be …"). */
export function checkValue(def: KeyDef, v: unknown): string | undefined {
  const ok = def.type === 'int' ? typeof v === 'number' && Number.isInteger(v) && v >= def.min && v <= def.max
    : def.type === 'bool' ? typeof v === 'boolean'
      : def.type === 'enum' ? typeof v === 'string' && def.values.includes(v)
        : typeof v === 'string' && (def.required !== true || v.trim() !== '');
  return ok ? undefined : `must be ${describeType(def)}`;
}

/** Salt buckets that fit the salt width: one without a salt, 256 per salt byte. */
export function maxSaltBuckets(saltWidth: number): number {
  return saltWidth === 0 ? 1 : 2 ** (8 * saltWidth);
}

/**
 * Defaults overridden by `overrides` (undefined values count as absent), every value
 * checked against the table and the values against each other. Throws RangeError naming
 * the field and its key.
 */
export function resolveTsdbConfig(overrides: Partial<TsdbConfig> = {}): TsdbConfig {
  const c: Record<string, unknown> = { ...DEFAULT_TSDB_CONFIG };
  for (const [k, v] of Object.entries(overrides)) {
    if (!(TSDB_FIELDS as readonly string[]).includes(k)) throw new RangeError(`config: unknown field ${k}`);
    if (v !== undefined) c[k] = v;
  }
  for (const f of TSDB_FIELDS) {
    const problem = checkValue(defOf(f), c[f]);
    if (problem !== undefined) throw new RangeError(`config ${f} (${defOf(f).key}) ${problem}, got ${String(c[f])}`);
  }
  const r = c as TsdbConfig;
  try {
    parseRetention(r.retention, r.retentionMetrics);
  } catch (err) {
    throw new RangeError(`config ${(err as Error).message}`);
  }
  const maxBuckets = maxSaltBuckets(r.saltWidth);
  if (r.saltBuckets > maxBuckets) {
    throw new RangeError(`config saltBuckets (horae.salt.buckets) must be at most ${maxBuckets} with a salt width of ${r.saltWidth}, got ${r.saltBuckets}`);
  }
  return r;
}

/** What /api/config shows of a value: secrets only say whether they are set. */
function shown(def: KeyDef, v: unknown): string {
  if (def.secret === true) return v === '' ? '' : '(set; hidden)';
  return String(v);
}

/**
 * The running configuration as GET /api/config answers it (OpenTSDB's shape: key → string
 * value, sorted): every TsdbConfig field under its horae.* key and its OpenTSDB name, and
 * what Horae always does for OpenTSDB keys it has no setting for.
 */
export function configStrings(c: TsdbConfig): Record<string, string> {
  const out: Array<[string, string]> = [];
  for (const f of TSDB_FIELDS) {
    const def = defOf(f);
    const value = shown(def, c[f]);
    out.push([def.key, value]);
    for (const a of def.aliases ?? []) if (a.startsWith('tsd.')) out.push([a, value]);
  }
  for (const k of FIXED_OPENTSDB_KEYS) out.push([k.key, k.value]);
  return Object.fromEntries(out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

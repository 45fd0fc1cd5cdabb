/**
 * OpenTSDB's `m=` sub-query syntax ⇄ SubQuery, as the HTTP API and OpenTSDB's own UI
 * write it:
 *
 *   <agg>:[rate[{counter[,max[,reset]]}]:][<interval>-<fn>[-<fill>]:]<metric>[{<group-by filters>}][{<other filters>}]
 *
 * Middle parts are recognised by prefix, in any order (the API puts rate first, the old
 * UI puts the downsample first). A filter is `key=value` where value is `*`, a literal,
 * `a|b`, or `type(expression)`; `rate{dropcounter,…}` sets dropResets. Pure; throws
 * MExpressionError with the offending text on bad input.
 */
import type { Downsample, RateOptions, SubQuery, TagFilter } from './dashboard-state.js';

export class MExpressionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MExpressionError';
  }
}

export function parseMExpression(text: string): SubQuery {
  const m = text.trim();
  const parts = splitHead(m);
  if (parts.length < 2) throw new MExpressionError(`Invalid m=${m}: expected <aggregator>:<metric>`);
  const last = parts[parts.length - 1]!;
  const brace = last.indexOf('{');
  const aggregator = parts[0]!;
  const metric = (brace < 0 ? last : last.slice(0, brace)).trim();
  const filterText = brace < 0 ? '' : last.slice(brace);
  if (aggregator === '' || !/^[A-Za-z0-9_]+$/.test(aggregator)) throw new MExpressionError(`Invalid m=${m}: bad aggregator "${aggregator}"`);
  if (metric === '') throw new MExpressionError(`Invalid m=${m}: missing metric`);
  let downsample: Downsample | undefined;
  let rate: RateOptions | undefined;
  for (const part of parts.slice(1, -1)) {
    if (part.startsWith('rate')) rate = parseRate(part, m);
    else if (/^[0-9]/.test(part) || part.startsWith('all-')) downsample = parseDownsample(part, m);
    else throw new MExpressionError(`Invalid m=${m}: unsupported part "${part}"`);
  }
  const tags = parseFilterGroups(filterText, m);
  return { aggregator, metric, tags, axis: 'y', ...(downsample === undefined ? {} : { downsample }), ...(rate === undefined ? {} : { rate }) };
}

/** Splits `sum:rate{counter,1,2}:1m-avg:metric{k=regexp(a:b)}` on the colons outside braces. */
function splitHead(head: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of head) {
    if (ch === '{') depth++;
    if (ch === '}') depth--;
    if (ch === ':' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

function parseRate(part: string, m: string): RateOptions {
  if (part === 'rate') return { counter: false, dropResets: false };
  const opts = /^rate\{([^}]*)\}$/.exec(part);
  if (opts === null) throw new MExpressionError(`Invalid m=${m}: bad rate "${part}"`);
  const [kind = '', max = '', reset = ''] = opts[1]!.split(',').map((s) => s.trim());
  if (kind !== 'counter' && kind !== 'dropcounter' && kind !== '') throw new MExpressionError(`Invalid m=${m}: bad rate option "${kind}"`);
  const num = (s: string, what: string): number | undefined => {
    if (s === '') return undefined;
    const n = Number(s);
    if (!Number.isFinite(n)) throw new MExpressionError(`Invalid m=${m}: bad rate ${what} "${s}"`);
    return n;
  };
  const counterMax = num(max, 'counter max');
  const resetValue = num(reset, 'reset value');
  return {
    counter: kind !== '',
    dropResets: kind === 'dropcounter',
    ...(counterMax === undefined ? {} : { counterMax }),
    ...(resetValue === undefined ? {} : { resetValue }),
  };
}

function parseDownsample(part: string, m: string): Downsample {
  const bits = part.split('-');
  if (bits.length < 2 || bits.length > 3 || bits[1] === '') throw new MExpressionError(`Invalid m=${m}: bad downsample "${part}" (want <interval>-<fn>[-<fill>])`);
  if (!/^([0-9]+(ms|s|m|h|d|w|n|y)c?|0?all)$/.test(bits[0]!)) throw new MExpressionError(`Invalid m=${m}: bad downsample interval "${bits[0]}"`);
  return { interval: bits[0]!, fn: bits[1]!, fill: bits[2] ?? 'none' };
}

function parseFilterGroups(text: string, m: string): TagFilter[] {
  if (text === '') return [];
  const groups: string[] = [];
  let depth = 0;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '{') {
      if (depth === 0) start = i + 1;
      depth++;
    } else if (ch === '}') {
      depth--;
      if (depth === 0) groups.push(text.slice(start, i));
      if (depth < 0) break;
    } else if (depth === 0) throw new MExpressionError(`Invalid m=${m}: unexpected "${text.slice(i)}" after the filters`);
  }
  if (depth !== 0) throw new MExpressionError(`Invalid m=${m}: unbalanced braces`);
  if (groups.length > 2) throw new MExpressionError(`Invalid m=${m}: at most two filter groups`);
  const out: TagFilter[] = [];
  groups.forEach((g, gi) => {
    for (const f of splitTopLevel(g)) {
      if (f.trim() === '') continue;
      const eq = f.indexOf('=');
      if (eq <= 0) throw new MExpressionError(`Invalid m=${m}: bad filter "${f}" (want key=value)`);
      out.push({ key: f.slice(0, eq).trim(), value: f.slice(eq + 1).trim(), groupBy: gi === 0 });
    }
  });
  return out;
}

/** Splits on commas outside parentheses (a regexp filter may hold commas). */
function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

export function formatMExpression(q: SubQuery): string {
  let s = `${q.aggregator}:`;
  if (q.rate !== undefined) {
    const r = q.rate;
    if (!r.counter && r.counterMax === undefined && r.resetValue === undefined) s += 'rate:';
    else s += `rate{${r.dropResets ? 'dropcounter' : r.counter ? 'counter' : ''},${r.counterMax ?? ''},${r.resetValue ?? ''}}:`;
  }
  if (q.downsample !== undefined) {
    const d = q.downsample;
    s += `${d.interval}-${d.fn}${d.fill === 'none' || d.fill === '' ? '' : `-${d.fill}`}:`;
  }
  s += q.metric;
  const gb = q.tags.filter((t) => t.groupBy);
  const other = q.tags.filter((t) => !t.groupBy);
  const fmt = (ts: readonly TagFilter[]): string => `{${ts.map((t) => `${t.key}=${t.value}`).join(',')}}`;
  if (gb.length > 0 || other.length > 0) s += fmt(gb);
  if (other.length > 0) s += fmt(other);
  return s;
}

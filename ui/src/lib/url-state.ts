/**
 * DashboardState ⇄ the URL hash. The format is OpenTSDB's own UI link format, extended
 * with panels, so an OpenTSDB link (`#start=1h-ago&m=sum:rate:cpu{host=*}&o=axis x1y2
 * &ylog&yrange=[0:]&autoreload=15`) opens as the same query in one panel:
 *
 *   start, end, autoreload (seconds), theme            — the whole dashboard
 *   panel=<title>                                      — starts the next panel
 *   m=<m expression>, o=<options of the m before it>   — a sub-query (m-expression.ts);
 *                                                        `o=axis x1y2` puts it on the right axis
 *   ylog, y2log, yrange=[min:max], y2range, ylabel, y2label, nokey, title
 *                                                      — the current panel
 *
 * Keys before the first `panel=` belong to the first panel. Keys of OpenTSDB's gnuplot
 * output (wxh, smooth, style, key, formats, colours) are accepted and ignored. Pairs keep
 * their order. Pure: parseHash never throws; what it could not use is listed in `errors`.
 */
import { defaultState, emptyPanel, DEFAULT_START } from './dashboard-state.js';
import type { AxisRange, DashboardState, Panel, SubQuery, ThemeName } from './dashboard-state.js';
import { formatMExpression, parseMExpression } from './m-expression.js';

export interface ParsedHash {
  readonly state: DashboardState;
  /** Human-readable problems: a bad m=, an unknown key, a bad range. */
  readonly errors: readonly string[];
}

const IGNORED_KEYS = new Set(['wxh', 'smooth', 'style', 'key', 'yformat', 'y2format', 'xformat', 'bgcolor', 'fgcolor', 'tz', 'nocache', 'ignore', 'png', 'json', 'ascii']);

interface MutablePanel {
  title: string;
  queries: SubQuery[];
  ylog: boolean;
  y2log: boolean;
  yrange?: AxisRange;
  y2range?: AxisRange;
  ylabel?: string;
  y2label?: string;
  nokey: boolean;
}

/** Splits a hash (with or without `#`) into ordered [key, value] pairs. */
export function hashPairs(hash: string): Array<[string, string]> {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  const out: Array<[string, string]> = [];
  for (const part of body.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const k = eq < 0 ? part : part.slice(0, eq);
    const v = eq < 0 ? '' : part.slice(eq + 1);
    out.push([decode(k), decode(v)]);
  }
  return out;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** Percent-encodes only what would break the hash: keeps `: { } | * , [ ] ( ) / =` readable. */
export function encodeValue(s: string): string {
  return encodeURIComponent(s).replace(/%(3A|7B|7D|7C|2C|5B|5D|2F|3D|40)/g, (m) => decodeURIComponent(m));
}

export function parseAxisRange(text: string): AxisRange | undefined {
  const m = /^\[\s*(-?[0-9.eE+-]*)\s*:\s*(-?[0-9.eE+-]*)\s*\]$/.exec(text.trim());
  if (m === null) return undefined;
  const num = (s: string): number | undefined => (s === '' ? undefined : Number(s));
  const min = num(m[1]!);
  const max = num(m[2]!);
  if ((min !== undefined && !Number.isFinite(min)) || (max !== undefined && !Number.isFinite(max))) return undefined;
  if (min !== undefined && max !== undefined && min >= max) return undefined;
  return { ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) };
}

export function formatAxisRange(r: AxisRange): string {
  return `[${r.min ?? ''}:${r.max ?? ''}]`;
}

function toPanel(p: MutablePanel): Panel {
  return { ...p, queries: p.queries };
}

export function parseHash(hash: string): ParsedHash {
  const errors: string[] = [];
  const base = defaultState();
  let start = DEFAULT_START;
  let end: string | undefined;
  let refreshSec = 0;
  let theme: ThemeName | undefined;
  const panels: MutablePanel[] = [];
  let cur: MutablePanel | undefined;
  const panel = (): MutablePanel => {
    if (cur === undefined) {
      cur = { ...emptyPanel(), queries: [] };
      panels.push(cur);
    }
    return cur;
  };
  for (const [k, v] of hashPairs(hash)) {
    switch (k) {
      case 'start':
        if (v !== '') start = v;
        break;
      case 'end':
        end = v === '' ? undefined : v;
        break;
      case 'autoreload':
      case 'refresh': {
        const n = Number(v === '' ? '15' : v);
        if (!Number.isFinite(n) || n < 0) errors.push(`Ignored ${k}=${v}: not a number of seconds`);
        else refreshSec = n === 0 ? 0 : Math.max(5, Math.round(n));
        break;
      }
      case 'theme':
        if (v === 'light' || v === 'dark') theme = v;
        else errors.push(`Ignored theme=${v}: use light or dark`);
        break;
      case 'panel':
        cur = { ...emptyPanel(v), queries: [] };
        panels.push(cur);
        break;
      case 'title':
        panel().title = v;
        break;
      case 'm':
        try {
          panel().queries.push(parseMExpression(v));
        } catch (err) {
          errors.push(`Ignored ${(err as Error).message}`);
        }
        break;
      case 'o': {
        const qs = panel().queries;
        const last = qs[qs.length - 1];
        if (last !== undefined && /\baxis\s+x1y2\b/.test(v)) qs[qs.length - 1] = { ...last, axis: 'y2' };
        break;
      }
      case 'ylog':
      case 'y2log':
        panel()[k] = v !== 'false' && v !== '0';
        break;
      case 'nokey':
        panel().nokey = v !== 'false' && v !== '0';
        break;
      case 'yrange':
      case 'y2range': {
        if (v === '') break;
        const r = parseAxisRange(v);
        if (r === undefined) errors.push(`Ignored ${k}=${v}: use [min:max], either end may be empty`);
        else panel()[k] = r;
        break;
      }
      case 'ylabel':
      case 'y2label':
        if (v !== '') panel()[k] = v;
        break;
      default:
        if (!IGNORED_KEYS.has(k)) errors.push(`Ignored unknown key "${k}"`);
    }
  }
  for (const p of panels) if (p.queries.length === 0) p.queries.push(emptyPanel().queries[0]!);
  return {
    state: {
      start,
      ...(end === undefined ? {} : { end }),
      refreshSec,
      ...(theme === undefined ? {} : { theme }),
      panels: panels.length === 0 ? base.panels : panels.map(toPanel),
    },
    errors,
  };
}

/** The hash for a state (without `#`). A lone untitled panel is written exactly as OpenTSDB's UI would. */
export function formatHash(state: DashboardState): string {
  const pairs: Array<[string, string]> = [['start', state.start]];
  if (state.end !== undefined && state.end !== '') pairs.push(['end', state.end]);
  if (state.refreshSec > 0) pairs.push(['autoreload', String(state.refreshSec)]);
  if (state.theme !== undefined) pairs.push(['theme', state.theme]);
  const lone = state.panels.length === 1 && state.panels[0]!.title === '';
  for (const p of state.panels) {
    if (!lone) pairs.push(['panel', p.title]);
    for (const q of p.queries) {
      if (q.metric === '') continue;
      pairs.push(['m', formatMExpression(q)]);
      if (q.axis === 'y2') pairs.push(['o', 'axis x1y2']);
    }
    if (p.ylog) pairs.push(['ylog', '']);
    if (p.y2log) pairs.push(['y2log', '']);
    if (p.yrange !== undefined) pairs.push(['yrange', formatAxisRange(p.yrange)]);
    if (p.y2range !== undefined) pairs.push(['y2range', formatAxisRange(p.y2range)]);
    if (p.ylabel !== undefined) pairs.push(['ylabel', p.ylabel]);
    if (p.y2label !== undefined) pairs.push(['y2label', p.y2label]);
    if (p.nokey) pairs.push(['nokey', '']);
  }
  return pairs.map(([k, v]) => (v === '' && k !== 'panel' ? k : `${k}=${encodeValue(v)}`)).join('&');
}

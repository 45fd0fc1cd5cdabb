/**
 * bench:cardinality's queries (bench/query/queries.ts cardinalityQueries): the tag filter
 * selects exactly 1,000 hosts on both systems' terms, and answers are keyed by the query's
 * tag (region for the group-by), so the two systems' answers can be compared.
 */
import { describe, expect, it } from 'vitest';
import { devopsOptions } from '../../bench/devops-data.js';
import { cardinalityQueries, compare, horaeAnswer, vmAnswer } from '../../bench/query/queries.js';

describe('cardinality queries', () => {
  const o = { ...devopsOptions({ hosts: 12_345, values: '2dec' }), steps: 12, intervalSec: 600 };
  const [group, filter] = cardinalityQueries(o);

  it('selects host_1000 … host_1999 with the regexp each system is sent', () => {
    const horaeFilter = (JSON.parse(filter!.horae.body!) as { queries: Array<{ filters: Array<{ filter: string }> }> }).queries[0]!.filters[0]!.filter;
    const vmRegex = /hostname=~"([^"]+)"/.exec(decodeURIComponent(filter!.vm.path.replace(/\+/g, ' ')))![1]!;
    const names = Array.from({ length: o.hosts }, (_, h) => `host_${h}`);
    // OpenTSDB's regexp filter finds anywhere in the value; PromQL's =~ is anchored.
    const horae = names.filter((n) => new RegExp(horaeFilter).test(n));
    const vm = names.filter((n) => new RegExp(`^(?:${vmRegex})$`).test(n));
    expect(horae).toHaveLength(1000);
    expect(vm).toEqual(horae);
    expect(horae[0]).toBe('host_1000');
    expect(horae[999]).toBe('host_1999');
  });

  it('keys the group-by answers by region on both systems, one bucket at the hour start', () => {
    const t = o.startSec;
    const horae = Buffer.from(JSON.stringify([
      { metric: 'cpu.usage_user', tags: { region: 'eu-west-1' }, aggregateTags: [], dps: { [t]: 50.5 } },
      { metric: 'cpu.usage_user', tags: { region: 'us-east-1' }, aggregateTags: [], dps: { [t]: 49 } },
    ]));
    const vm = Buffer.from(JSON.stringify({
      status: 'success',
      data: { resultType: 'matrix', result: [
        { metric: { region: 'us-east-1' }, values: [[t + 3600 - 0.001, '49']] },
        { metric: { region: 'eu-west-1' }, values: [[t + 3600 - 0.001, '50.5']] },
      ] },
    }));
    const a = horaeAnswer(group!, horae).answer;
    expect([...a.keys()]).toEqual(['eu-west-1', 'us-east-1']);
    expect(compare(a, vmAnswer(group!, vm, 'opentsdb')).ok).toBe(true);
  });

  it('refuses a dataset too small to hold the selected hosts', () => {
    expect(() => cardinalityQueries({ ...o, hosts: 1999 })).toThrow(/2,000 hosts/);
  });
});

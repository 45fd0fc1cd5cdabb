/**
 * The body of GET /api/config/filters: every loaded tag-value filter type with the
 * `examples` and `description` strings its OpenTSDB class returns, verbatim (the static
 * examples()/description() of src/query/filter/TagV*Filter.java in 2.4/2.5). `not_key` is
 * absent because OpenTSDB's registration of it is commented out. Grafana reads only the keys.
 */

export interface FilterTypeInfo {
  readonly examples: string;
  readonly description: string;
}

const literalDescription = (not: boolean, insensitive: boolean): string =>
  `Accepts one or more exact values and matches if the series ${not ? 'does NOT contain' : 'contains'} ` +
  `any of them. Multiple values can be included and must be separated by the | (pipe) character. ` +
  `The filter is case ${insensitive ? 'insensitive' : 'sensitive'} and will not allow characters that ` +
  'TSDB does not allow at write time.';

const literalExamples = (type: string): string =>
  `host=${type}(web01),  host=${type}(web01|web02|web03)  ` +
  `{"type":"${type}","tagk":"host","filter":"web01|web02|web03","groupBy":false}`;

const wildcardExamples = (type: string): string =>
  `host=${type}(web*),  host=${type}(web*.tsdb.net)  ` +
  `{"type":"${type}","tagk":"host","filter":"web*.tsdb.net","groupBy":false}`;

export const FILTER_TYPES: Readonly<Record<string, FilterTypeInfo>> = Object.freeze({
  literal_or: { examples: literalExamples('literal_or'), description: literalDescription(false, false) },
  iliteral_or: { examples: literalExamples('iliteral_or'), description: literalDescription(false, true) },
  not_literal_or: { examples: literalExamples('not_literal_or'), description: literalDescription(true, false) },
  not_iliteral_or: { examples: literalExamples('not_iliteral_or'), description: literalDescription(true, true) },
  wildcard: {
    examples: wildcardExamples('wildcard'),
    description: 'Performs pre, post and in-fix glob matching of values. The globs are case sensitive and ' +
      'multiple wildcards can be used. The wildcard character is the * (asterisk). At least one wildcard ' +
      'must be present in the filter value. A wildcard by itself can be used as well to match on any value ' +
      'for the tag key.',
  },
  iwildcard: {
    examples: wildcardExamples('iwildcard'),
    description: 'Performs pre, post and in-fix glob matching of values. The globs are case insensitive and ' +
      'multiple wildcards can be used. The wildcard character is the * (asterisk). Case insensitivity is ' +
      'achieved by dropping all values to lower case. At least one wildcard must be present in the filter ' +
      'value. A wildcard by itself can be used as well to match on any value for the tag key.',
  },
  regexp: {
    examples: 'host=regexp(.*)  {"type":"regexp","tagk":"host","filter":".*","groupBy":false}',
    description: 'Provides full, POSIX compliant regular expression using the built in Java Pattern class. ' +
      'Note that an expression containing curly braces {} will not parse properly in URLs. If the pattern ' +
      'is not a valid regular expression then an exception will be raised.',
  },
});

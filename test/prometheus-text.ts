/**
 * A strict reader of Prometheus's text exposition format (version 0.0.4), for tests. Written here
 * because the one parser on npm for it (parse-prometheus-text-format 1.1.1, unmaintained) merges
 * every labelled series of a histogram into one (seen: a histogram by route came back as a single
 * set of buckets without labels). It refuses what Prometheus would refuse to ingest: a sample of
 * no declared family, a malformed name, label or value, a family declared twice, a series twice.
 */
export interface Sample {
  /** The sample's own name (`x_bucket`, `x_count` for a histogram `x`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const SUFFIXES: Record<Family['type'], string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const fail = (line: number, why: string): never => {
    throw new Error(`metrics line ${line + 1}: ${why}`);
  };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (!line) continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) continue; // a comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) fail(i, `bad metric name ${name}`);
      const family = families.get(name) ?? { name, help: '', type: 'untyped' as const, samples: [] };
      if (kind === 'HELP') family.help = rest;
      else {
        if (!(rest in SUFFIXES)) fail(i, `unknown type ${rest}`);
        if (family.samples.length) fail(i, `TYPE of ${name} after its samples`);
        family.type = rest as Family['type'];
      }
      families.set(name, family);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/.exec(line);
    if (!m) fail(i, `not a sample: ${line}`);
    const [, name, , body, value] = m as unknown as [string, string, string, string | undefined, string];
    const labels = parseLabels(body ?? '', (why) => fail(i, why));
    const family = [...families.values()].find((f) => SUFFIXES[f.type].some((s) => `${f.name}${s}` === name));
    if (!family) return fail(i, `sample ${name} of no declared family`);
    const number = numberOf(value);
    if (number === null) fail(i, `bad value ${value}`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) fail(i, `series ${key} twice`);
    seen.add(key);
    family.samples.push({ name, labels, value: number as number });
  }
  return families;
}

/** A value as Prometheus reads it (Go's ParseFloat: NaN and Inf in any case), or null. */
function numberOf(text: string): number | null {
  const lower = text.toLowerCase();
  if (lower === 'nan') return Number.NaN;
  if (/^[+-]?inf(inity)?$/.test(lower)) return lower.startsWith('-') ? -Infinity : Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(lower)) return null;
  return Number(text);
}

function parseLabels(body: string, fail: (why: string) => never): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = body.trim();
  while (rest) {
    const m = /^([^=\s]+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,\s*)?/.exec(rest);
    if (!m) fail(`bad labels: ${body}`);
    const [all, name, value] = m as unknown as [string, string, string];
    if (!LABEL.test(name)) fail(`bad label name ${name}`);
    if (name in labels) fail(`label ${name} twice`);
    labels[name] = value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(all.length);
  }
  return labels;
}

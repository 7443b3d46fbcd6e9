import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventSample } from '../src/services/events/samples.ts';
import { EVENT_TYPES } from '../src/events/types.ts';

/**
 * src/events/samples.ts is the data of docs/events.md's Samples (a sample event's `data`, issue
 * 29): one is edited by hand, the other shown to integrators, so this holds them together. Each
 * `#### <type>` heading of the Samples section is followed by its envelope in a json block.
 */
function documentedSamples(): Map<string, { type: string; data: unknown }> {
  const doc = readFileSync(path.resolve(import.meta.dirname, '../docs/events.md'), 'utf8');
  const start = doc.indexOf('\n## Samples\n');
  expect(start, 'docs/events.md has a Samples section').toBeGreaterThan(-1);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end === -1 ? undefined : end);
  const found = new Map<string, { type: string; data: unknown }>();
  for (const m of section.matchAll(/^#### (\S+)\n+```json\n([\s\S]*?)\n```/gm)) {
    expect(found.has(m[1]), `${m[1]} shown twice`).toBe(false);
    found.set(m[1], JSON.parse(m[2]));
  }
  return found;
}

describe("docs/events.md's Samples and src/events/samples.ts", () => {
  const documented = documentedSamples();

  it('show one sample of every type of the catalog, and no other', () => {
    expect([...documented.keys()].sort()).toEqual([...EVENT_TYPES].sort());
  });

  it.each([...EVENT_TYPES])(
    '%s: the envelope is of its heading, its data the sample, member order included',
    (type) => {
      const envelope = documented.get(type);
      expect(envelope?.type).toBe(type);
      // Member order too: the documented envelopes are real output, and the samples copy it as it is.
      expect(JSON.stringify(envelope?.data)).toBe(JSON.stringify(eventSample(type)));
    },
  );
});

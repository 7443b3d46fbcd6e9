import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withSamples } from '../scripts/events-doc.ts';
import { EVENT_TYPES } from '../src/events/types.ts';
import { eventSample } from '../src/services/webhooks/sample-data.ts';

/**
 * docs/events.md's Samples are written by `npm run contracts` (scripts/events-doc.ts) from the
 * samples (src/services/webhooks/sample-data.ts, issue 36): this fails when they drift, and holds each
 * `#### <type>` heading's json block to its type's sample, member order included.
 */
const doc = readFileSync(path.resolve(import.meta.dirname, '../docs/events.md'), 'utf8');

function documentedSamples(): Map<string, { type: string; data: unknown }> {
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

describe("docs/events.md's Samples and the sample events", () => {
  const documented = documentedSamples();

  it('are what `npm run contracts` writes', () => {
    expect(withSamples(doc) === doc, 'docs/events.md: its Samples are stale; run `npm run contracts`').toBe(
      true,
    );
  });

  it('show one sample of every type of the catalog, and no other', () => {
    expect([...documented.keys()].sort()).toEqual([...EVENT_TYPES].sort());
  });

  it.each([...EVENT_TYPES])(
    '%s: the envelope is of its heading, its data the sample, member order included',
    (type) => {
      const envelope = documented.get(type);
      expect(envelope?.type).toBe(type);
      // Member order too: a delivery's, the outbox's jsonb order.
      expect(JSON.stringify(envelope?.data)).toBe(JSON.stringify(eventSample(type)));
    },
  );
});

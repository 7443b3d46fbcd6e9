/**
 * docs/events.md's Samples, written by `npm run contracts` (scripts/contracts.ts) between its
 * markers: each type's sample envelope (src/services/webhooks/sample-data.ts) under a `#### <type>`
 * heading, wrapped for reading. Only the lines between the markers are the generator's.
 */

import { EVENT_TYPES } from '../src/events/types.ts';
import { sampleEnvelope } from '../src/services/webhooks/sample-data.ts';

export const SAMPLES_START =
  '<!-- Samples: written by `npm run contracts` from src/events/examples.ts; edit those, not these. -->';
export const SAMPLES_END = '<!-- End of the samples. -->';

const WIDTH = 100;

/** JSON with a space after each `:` and `,`, as the doc's readers expect it. */
function spaced(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spaced).join(', ')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  return `{${Object.entries(value)
    .map(([k, v]) => `${JSON.stringify(k)}: ${spaced(v)}`)
    .join(', ')}}`;
}

/** The envelope: its own members on the first line, `data`'s members wrapped under it. */
function envelopeBlock(type: (typeof EVENT_TYPES)[number]): string {
  const { data, ...head } = sampleEnvelope(type);
  const members = Object.entries(data).map(([k, v]) => `${JSON.stringify(k)}: ${spaced(v)}`);
  const lines: string[] = [];
  let line = '';
  for (const m of members) {
    if (line && line.length + 2 + m.length + 1 > WIDTH) {
      lines.push(`${line},`);
      line = '';
    }
    line = line ? `${line}, ${m}` : `  ${m}`;
  }
  if (line) lines.push(line);
  return [`${spaced(head).slice(0, -1)}, "data": {`, ...lines, '}}'].join('\n');
}

export function samplesSection(): string {
  return EVENT_TYPES.map((type) => `#### ${type}\n\n\`\`\`json\n${envelopeBlock(type)}\n\`\`\`\n`).join('\n');
}

/** `doc` with its samples regenerated; fails when the markers are missing. */
export function withSamples(doc: string): string {
  const start = doc.indexOf(SAMPLES_START);
  const end = doc.indexOf(SAMPLES_END);
  if (start === -1 || end < start)
    throw new Error(`docs/events.md: the Samples markers are missing (${SAMPLES_START} ... ${SAMPLES_END}).`);
  return `${doc.slice(0, start + SAMPLES_START.length)}\n\n${samplesSection()}\n${doc.slice(end)}`;
}

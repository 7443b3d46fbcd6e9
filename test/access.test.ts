import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  eventTypesRefusal,
  fieldRefusal,
  hiddenEventScopes,
  hiddenEventTypes,
  lacking,
  mayReach,
  narrowingRefusal,
  refusal,
  seesEventTypes,
  visibleEventTypes,
} from '../src/auth/access.ts';
import { scopeToSee } from '../src/auth/event-scopes.ts';
import { allOf, allScopes, forbidden } from '../src/auth/scopes.ts';
import { EVENT_TYPES } from '../src/events/types.ts';
import { builder } from '../src/schema/builder.ts';

/**
 * src/auth/access.ts decides what a principal may reach. Here: its answers, and that nothing
 * else in src decides (test/access-everywhere.test.ts: every transport follows a change of it).
 */
const holding = (...scopes: string[]) => ({ scopes: new Set(scopes) });
const every = holding(...allScopes);
const noChat = holding(...allScopes.filter((s) => s !== 'chat:read'));

const bodyOf = (e: unknown) => {
  const { code, status, message, details } = e as Record<string, unknown>;
  return { code, status, message, details };
};

describe('access: fields and records', () => {
  it('names the scopes a holder lacks, in the order needed, once each', () => {
    const who = holding('catalog:read');
    expect(lacking(who, ['vaccines:read', 'catalog:read', 'measurements:read', 'vaccines:read'])).toEqual([
      'vaccines:read',
      'measurements:read',
    ]);
    expect(mayReach(who, ['catalog:read'])).toBe(true);
    expect(mayReach(who, ['catalog:read', 'vaccines:read'])).toBe(false);
    expect(mayReach(who, [])).toBe(true);
  });

  it("a field's 403 is forbidden() naming every scope it lacks; none when it holds them", () => {
    const field = allOf(['catalog:read', 'vaccines:read', 'measurements:read']);
    const refused = fieldRefusal(holding('vaccines:read'), field);
    expect(bodyOf(refused)).toEqual(bodyOf(forbidden(['catalog:read', 'measurements:read'])));
    expect(bodyOf(refused)).toMatchObject({
      status: 403,
      message: 'This API key lacks the scope required here: catalog:read, measurements:read.',
      details: { required_scopes: ['catalog:read', 'measurements:read'] },
    });
    expect(fieldRefusal(every, field)).toBeUndefined();
    // A field that declares nothing is open (the REST check and Pothos' agree).
    expect(fieldRefusal(holding(), undefined)).toBeUndefined();
    expect(refusal(holding(), ['patients:read'])?.message).toBe(
      'This API key lacks the scope required here: patients:read.',
    );
  });

  it('a key that changed is refused for the scopes it lost, not for those it gained', () => {
    const before = holding('patients:read', 'chat:read', 'webhooks:manage');
    expect(bodyOf(narrowingRefusal(before, holding('webhooks:manage', 'calls:read')))).toEqual(
      bodyOf(forbidden(['patients:read', 'chat:read'])),
    );
    expect(
      narrowingRefusal(before, holding('patients:read', 'chat:read', 'webhooks:manage', 'calls:read')),
    ).toBe(undefined);
  });

  it("GraphQL's one scope loader is access's answer for the field's declared scopes", () => {
    const initial = (builder as any).options.scopeAuth.authScopes({ principal: holding('catalog:read') });
    expect(Object.keys(initial)).toEqual(['reach']);
    expect(initial.reach(allOf(['catalog:read']).reach)).toBe(true);
    expect(initial.reach(allOf(['catalog:read', 'vaccines:read']).reach)).toBe(false);
  });
});

describe('access: event families', () => {
  it('each type is seen exactly when its scopeToSee is held', () => {
    for (const t of EVENT_TYPES) {
      expect(seesEventTypes(every, [t]), t).toBe(true);
      expect(seesEventTypes(noChat, [t]), t).toBe(scopeToSee(t) === undefined);
    }
    expect(hiddenEventTypes(every)).toEqual([]);
    expect(visibleEventTypes(every)).toEqual(EVENT_TYPES);
    const hidden = hiddenEventTypes(noChat);
    expect(hidden.length).toBeGreaterThan(0);
    expect(hidden.every((t) => t.startsWith('chat.'))).toBe(true);
    expect([...visibleEventTypes(noChat), ...hidden].sort()).toEqual([...EVENT_TYPES].sort());
  });

  it('the gating scopes a key lacks, and the 403 of asking for what it may not see', () => {
    expect(hiddenEventScopes(every)).toEqual([]);
    expect(hiddenEventScopes(noChat)).toEqual(['chat:read']);
    expect(
      bodyOf(eventTypesRefusal(noChat, ['patient.created', 'chat.message.sent', 'chat.message.read'])),
    ).toEqual(bodyOf(forbidden(['chat:read'])));
    expect(eventTypesRefusal(noChat, ['patient.created'])).toBeUndefined();
    expect(seesEventTypes(noChat, ['patient.created', 'chat.message.read'])).toBe(false);
  });
});

describe('access: the one place', () => {
  /** Every .ts file under src. */
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
    );

  it("no src file but src/auth/access.ts reads a key's scopes or the gating scopes", () => {
    // A key's scopes tested by hand (`principal.scopes`, `scopes.has(`) or the event families'
    // gating scopes used beside their definition would be a second decision.
    const reading = /principal\.scopes|\.scopes\.has\(|GATING_SCOPES/;
    const allowed = new Set(['src/auth/access.ts', 'src/auth/event-scopes.ts']);
    const root = join(import.meta.dirname, '..');
    const offenders = files(join(root, 'src'))
      .map((f) => relative(root, f))
      .filter((f) => !allowed.has(f))
      .flatMap((f) =>
        readFileSync(join(root, f), 'utf8')
          .split('\n')
          .flatMap((line, i) => (reading.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(offenders).toEqual([]);
  });
});

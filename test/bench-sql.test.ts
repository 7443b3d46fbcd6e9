import { expect, it } from 'vitest';
import { chatSql } from '../bench/chat-sql.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp } from './helpers.ts';

/** bench/raw-server.ts runs bench/chat-sql.ts: the statements must be the app's, to the byte. */
it("the raw baseline's chat statements are the ones the app runs", async () => {
  const app = await startTestApp({ keyCacheTtlMs: 60_000 });
  const c = await app.clinicWithKey('dental', ['chat:read']);
  await fixtures(app.orm, c.clinicId).chat('050-111-2222');
  const ran = async (path: string) => {
    await app.get(path, c.key);
    app.queries.length = 0;
    expect((await app.get(path, c.key)).status).toBe(200);
    return app.queries.map((q) => q.replace(/^\[query\] /, '').replace(/ \[took .*$/s, ''));
  };
  expect(await ran('/v1/chat/messages?limit=25')).toEqual([chatSql.messages, chatSql.patientsByPhone]);
  expect(await ran('/v1/chat/messages?limit=25&updated_since=2020-01-01')).toEqual([
    chatSql.messagesSync,
    chatSql.patientsByPhone,
  ]);
  expect(await ran('/v1/chat/conversations?limit=25')).toEqual([
    chatSql.conversations,
    chatSql.patientsByPhone,
  ]);
});

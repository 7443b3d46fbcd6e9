import { beforeAll, describe, expect, it } from 'vitest';
import { type DemoResult, seedDemo } from '../src/demo/seed-demo.ts';
import { Conversation } from '../src/entities/index.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Issue 25: the demo seed once left a message `queued` with no send job, and every later send of
 * its conversation (the first patient's) waited 15 minutes behind it. Right after seeding, as
 * right after `npm start`, a send there goes out within seconds.
 */
let app: TestApp;
let demo: DemoResult;

beforeAll(async () => {
  app = await startTestApp();
  demo = await seedDemo(app.orm.em.fork(), { now: app.clock.now() });
});

describe('the demo chat right after seeding', () => {
  it("a send to the first patient's conversation is sent within seconds", async () => {
    const clinic = Number(demo.keys.chatWrite.clinic_id.split('_')[1]);
    const first = await app.orm.em
      .fork()
      .findOneOrFail(Conversation, { clinic }, { filters: false, orderBy: { id: 'asc' } });
    const r = await app.post(
      '/v1/chat/messages',
      { to: first.patientPhone, text: 'Right after the demo start' },
      demo.keys.chatWrite.key,
    );
    expect(r.status).toBe(202);
    expect(r.body.data.conversation_id).toBe(`conv_${first.id}`);
    const id = r.body.data.id as string;
    let status = 'queued';
    for (const until = Date.now() + 5000; status === 'queued' && Date.now() < until; ) {
      await new Promise((res) => setTimeout(res, 50));
      status = (await app.get(`/v1/chat/messages/${id}`, demo.keys.readAll.key)).body.data.status;
    }
    expect(['sent', 'delivered', 'read']).toContain(status);
  });

  it('leaves no message queued: nothing would ever send it', async () => {
    for (const key of [demo.keys.readAll.key, demo.keys.vetReadAll.key]) {
      const seeded = (await app.get('/v1/chat/messages?limit=100', key)).body.data;
      expect(seeded.length).toBeGreaterThan(0);
      expect(
        seeded.filter((m: any) => m.status === 'queued' && m.text !== 'Right after the demo start'),
      ).toEqual([]);
    }
  });
});

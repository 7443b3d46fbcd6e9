import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedDemo } from '../src/demo/seed-demo.ts';
import { Clinic } from '../src/entities/index.ts';
import { toneWav } from '../src/media/wav.ts';
import { fixtures } from './fixtures.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { pdf, png, serve, type TestServer } from './media-files.ts';

/**
 * Calls over REST and GraphQL (issue 16): reported once ended (call.completed), a staff note
 * (call.updated), the recording downloaded from a real HTTP server on loopback and linked
 * (call.recording.available), then one transcript (call.transcript.completed or .failed), in
 * the spec's order only; each event's data equal to the GET body; GET /v1/calls and its filters.
 */
let app: TestApp;
let clinicId: number;
let write: string;
let read: string;
let writeOnly: string;
let other: string;
let off: string;
let files: TestServer;
let downloads = 0;
let ids: { patient: string; shared1: string; patient2: string; patient3: string };
const wav = toneWav(0.25);
/** An MP4 container's first box (ftyp, brand isom): the sniffer calls it video/mp4 whatever it holds. */
const m4a = Buffer.concat([
  Buffer.from([0, 0, 0, 24]),
  Buffer.from('ftypisom', 'latin1'),
  Buffer.from([0, 0, 2, 0]),
  Buffer.from('isommp41', 'latin1'),
]);

beforeAll(async () => {
  app = await startTestApp({ limits: { mediaDownloadTimeoutMs: 1500 } });
  const c = await app.clinicWithKey('dental', ['calls:write', 'calls:read']);
  clinicId = c.clinicId;
  write = c.key;
  read = await app.key(clinicId, ['calls:read']);
  writeOnly = await app.key(clinicId, ['calls:write']);
  const em = app.orm.em.fork();
  await em.nativeUpdate(Clinic, { id: clinicId }, { aiTranscriptionEnabled: true });
  const fx = fixtures(app.orm, clinicId);
  const patient = await fx.patient({ first: 'Dana', last: 'Cohen', phone: '050-123-4567' });
  // Two on one number (a family): a call on it goes to the older one.
  const shared1 = await fx.patient({ first: 'Avi', last: 'Levi', phone: '052-765-4321' });
  await fx.patient({ first: 'Noa', last: 'Levi', phone: '052-765-4321' });
  const patient2 = await fx.patient({ first: 'Omer', last: 'Katz', phone: '054-111-2222' });
  const patient3 = await fx.patient({ first: 'Tal', last: 'Mor', phone: '054-333-4444' });
  ids = {
    patient: `pat_${patient.id}`,
    shared1: `pat_${shared1.id}`,
    patient2: `pat_${patient2.id}`,
    patient3: `pat_${patient3.id}`,
  };
  other = (await app.clinicWithKey('dental', ['calls:write', 'calls:read'])).key;
  off = (await app.clinicWithKey('dental', ['calls:write', 'calls:read'])).key;
  files = await serve((req, res) => {
    downloads++;
    const path = req.url ?? '';
    if (path === '/rec/call.wav') return res.end(wav);
    if (path === '/rec/call.m4a') return res.end(m4a);
    if (path === '/rec/photo.png') return res.end(png());
    if (path === '/rec/scan.pdf') return res.end(pdf());
    if (path === '/rec/to-private') {
      res.writeHead(302, { location: 'https://10.0.0.1/call.wav' });
      return res.end();
    }
    res.writeHead(404).end();
  });
});

beforeEach(() => app.clock.set('2026-11-20T08:00:00Z'));

const ended = {
  direction: 'inbound',
  from: '+972 50-123-4567',
  to: '03-555-0100',
  started_at: '2026-11-19T09:30:00+02:00',
  duration: 184,
  answered: true,
  recorded: true,
};
/** `ended` as a GraphQL input writes it: camelCase fields, the enum's name. */
const endedInput = {
  direction: 'INBOUND',
  from: ended.from,
  to: ended.to,
  startedAt: ended.started_at,
  duration: ended.duration,
  answered: ended.answered,
  recorded: ended.recorded,
};

const create = (body: Record<string, unknown> = {}, key = write, headers: Record<string, string> = {}) =>
  app.post('/v1/calls', { ...ended, ...body }, key, headers);

const recording = (id: string, url = `${files.url}/rec/call.wav`, key = write, headers = {}) =>
  app.post(`/v1/calls/${id}/recording`, { url }, key, headers);

const segments = [
  { start: 0, end: 3.5, speaker: 'clinic', text: 'Smile Dental, good morning.' },
  { start: 4, end: 9.25, speaker: 'patient', text: 'I need to move my check-up.' },
];

const transcript = (id: string, body: Record<string, unknown> = {}, key = write) =>
  app.post(`/v1/calls/${id}/transcript`, { status: 'completed', summary: 'Moved.', segments, ...body }, key);

async function eventsOf(objectId: string) {
  return app.orm.em
    .fork()
    .getConnection()
    .execute<{ type: string; data: any }[]>(
      `select "type", "data" from "event" where "data"->>'id' = ? order by "id"`,
      [objectId],
    );
}

const detailed = async (id: string, key = read) =>
  (await app.get(`/v1/calls/${id}?response_format=detailed`, key)).body.data;

/** A call reported and, when asked, given its recording. */
async function reported(body: Record<string, unknown> = {}, key = write, withRecording = false) {
  const r = await create(body, key);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  if (withRecording) expect((await recording(r.body.data.id, undefined, key)).status).toBe(200);
  return r.body.data.id as string;
}

describe('POST /v1/calls', () => {
  it('201: the call as GET shows it, phones local, the patient matched by phone; call.completed carries it', async () => {
    const r = await create({ note: 'Wants a morning slot' });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      id: expect.stringMatching(/^call_\d+$/),
      patient: { id: ids.patient, first_name: 'Dana', last_name: 'Cohen', phone: '0501234567' },
      direction: 'inbound',
      from: '0501234567',
      to: '035550100',
      started_at: '2026-11-19T07:30:00.000Z',
      ended_at: '2026-11-19T07:33:04.000Z',
      duration: 184,
      answered: true,
      recorded: true,
      note: 'Wants a morning slot',
      recording: { available: false },
      transcript: { status: null, summary: null, segments: null },
      created_at: '2026-11-20T08:00:00.000Z',
      updated_at: '2026-11-20T08:00:00.000Z',
    });
    expect(r.headers.get('etag')).toBe(`"${new Date(r.body.data.updated_at).getTime()}"`);
    const events = await eventsOf(r.body.data.id);
    expect(events.map((e) => e.type)).toEqual(['call.completed']);
    // The answer and the event are one object presented once (present-by-id.ts): each is compared
    // with a fresh GET, never with the other.
    expect(r.body.data).toEqual(await detailed(r.body.data.id));
    expect(events[0].data).toEqual(await detailed(r.body.data.id));
  });

  it('the patient is the other side: from for an inbound call, to for an outbound one; a shared number goes to the older patient; an unknown one to none', async () => {
    const out = await create({ direction: 'outbound', from: '03-555-0100', to: '054-111-2222' });
    expect(out.body.data).toMatchObject({
      patient: { id: ids.patient2 },
      from: '035550100',
      to: '0541112222',
    });
    const shared = await create({ from: '0527654321' });
    expect(shared.body.data.patient.id).toBe(ids.shared1);
    const unknown = await create({ from: '058-999-0000', answered: false, duration: 0, recorded: false });
    expect(unknown.body.data).toMatchObject({ patient: null, from: '0589990000', answered: false });
    // A withheld number (inbound only) matches nobody; a foreign number is shown international.
    const withheld = await create({ from: null });
    expect(withheld.body.data).toMatchObject({ patient: null, from: null });
    const abroad = await create({ from: '+44 20 7946 0958' });
    expect(abroad.body.data.from).toBe('+442079460958');
  });

  it('422 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ direction: 'sideways' }, 'direction'],
      [{ direction: undefined }, 'direction'],
      [{ from: 'call me' }, 'from'],
      [{ from: undefined }, 'from'],
      [{ to: '12' }, 'to'],
      [{ to: null }, 'to'],
      [{ direction: 'outbound', from: null }, 'from'],
      [{ started_at: 'yesterday' }, 'started_at'],
      // Ends after now (08:00Z) plus five minutes: not a completed call.
      [{ started_at: '2026-11-20T08:04:00Z', duration: 120 }, 'started_at'],
      [{ duration: -1 }, 'duration'],
      [{ duration: 1.5 }, 'duration'],
      [{ duration: 86_401 }, 'duration'],
      [{ answered: 'yes' }, 'answered'],
      [{ recorded: undefined }, 'recorded'],
      [{ note: 'x'.repeat(4001) }, 'note'],
      [{ colour: 'red' }, 'colour'],
    ];
    for (const [body, param] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.error, JSON.stringify(body)).toMatchObject({ code: 'validation_failed', param });
    }
    // A withheld caller is null, said outright: a body without from is refused before any look at it.
    expect((await create({ from: undefined })).body.error.message).toBe('from is required.');
  });

  it('403 without calls:write; the reads need calls:read', async () => {
    const r = await create({}, read);
    expect(r.status).toBe(403);
    expect(r.body.error.required_scopes).toEqual(['calls:write']);
    const id = await reported();
    for (const path of ['/v1/calls', `/v1/calls/${id}`, `/v1/calls/${id}/recording`]) {
      const g = await app.get(path, writeOnly);
      expect(g.status, path).toBe(403);
      expect(g.body.error.required_scopes).toEqual(['calls:read']);
    }
  });

  it('Idempotency-Key: the same body answers the first result once (one row, one event); another body is a 409', async () => {
    const key = 'call-key-1';
    const a = await create({ note: 'once' }, write, { 'idempotency-key': key });
    const b = await create({ note: 'once' }, write, { 'idempotency-key': key });
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body).toEqual(a.body);
    const [{ n }] = await app.orm.em
      .fork()
      .getConnection()
      .execute(`select count(*)::int as n from "call" where "note" = 'once'`);
    expect(n).toBe(1);
    expect((await eventsOf(a.body.data.id)).length).toBe(1);
    expect((await create({ note: 'twice' }, write, { 'idempotency-key': key })).status).toBe(409);
  });
});

describe('PATCH /v1/calls/{id}', () => {
  it('sets and clears the note (call.updated with the GET body); If-Match: a stale ETag is a 412 and changes nothing', async () => {
    const c = await create();
    const id = c.body.data.id;
    app.clock.set('2026-11-20T09:00:00Z');
    const r = await app.send('PATCH', `/v1/calls/${id}`, { note: 'Call back at 16:00' }, write, {
      'if-match': c.headers.get('etag') as string,
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ note: 'Call back at 16:00', updated_at: '2026-11-20T09:00:00.000Z' });
    const stale = await app.send('PATCH', `/v1/calls/${id}`, { note: 'lost' }, write, {
      'if-match': c.headers.get('etag') as string,
    });
    expect(stale.status).toBe(412);
    expect((await detailed(id)).note).toBe('Call back at 16:00');
    const cleared = await app.send('PATCH', `/v1/calls/${id}`, { note: null }, write);
    expect(cleared.body.data.note).toBeNull();
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['call.completed', 'call.updated', 'call.updated']);
    expect(events[2].data).toEqual(await detailed(id));
    for (const [body, param] of [
      [{}, 'note'],
      [{ note: 'x', answered: false }, 'answered'],
    ] as const) {
      const bad = await app.send('PATCH', `/v1/calls/${id}`, body, write);
      expect(bad.status).toBe(422);
      expect(bad.body.error.param).toBe(param);
    }
    expect((await app.send('PATCH', '/v1/calls/call_999999', { note: 'x' }, write)).status).toBe(404);
  });
});

describe('the recording', () => {
  it('downloaded from the phone system, kept, linked: call.recording.available; the link serves the same bytes', async () => {
    const id = await reported();
    app.clock.set('2026-11-20T08:05:00Z');
    const r = await recording(id);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      id,
      recording: { available: true },
      updated_at: '2026-11-20T08:05:00.000Z',
    });
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['call.completed', 'call.recording.available']);
    expect(events[1].data).toEqual(await detailed(id));

    const link = await app.get(`/v1/calls/${id}/recording`, read);
    expect(link.status).toBe(200);
    expect(link.body.data).toEqual({
      url: expect.stringMatching(/\/media\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/),
      expires_at: '2026-11-20T18:05:00.000Z',
      mime_type: 'audio/wav',
    });
    const got = await fetch(link.body.data.url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('audio/wav');
    expect(got.headers.get('content-disposition')).toContain(`${id}.wav`);
    expect(Buffer.from(await got.arrayBuffer()).equals(wav)).toBe(true);

    const g = await app.gql(
      `query($id: ID!) { node(id: $id) { ... on Call { recording { available } recordingLink { url mimeType } } } }`,
      { id },
      read,
    );
    expect(g.body.errors).toBeUndefined();
    expect(g.body.data.node).toEqual({
      recording: { available: true },
      recordingLink: { url: link.body.data.url, mimeType: 'audio/wav' },
    });
  });

  it('a second recording is a 409; a call not recorded is a 422 (param recorded) and nothing is downloaded', async () => {
    const id = await reported({}, write, true);
    const before = downloads;
    const again = await recording(id);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
    const unrecorded = await reported({ recorded: false });
    const r = await recording(unrecorded);
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe('recorded');
    expect(downloads).toBe(before);
    expect((await app.get(`/v1/calls/${unrecorded}/recording`, read)).status).toBe(404);
    expect((await eventsOf(unrecorded)).map((e) => e.type)).toEqual(['call.completed']);
  });

  it('refuses what is not audio, what is not there, and private addresses (422, param url), and changes nothing', async () => {
    const id = await reported();
    const cases: [string, RegExp][] = [
      [`${files.url}/rec/photo.png`, /not an audio recording \(its content is image\/png\)/],
      [`${files.url}/rec/scan.pdf`, /not an audio recording \(its content is application\/pdf\)/],
      [`${files.url}/rec/missing.wav`, /status 404/],
      ['https://10.0.0.1/call.wav', /private network/],
      ['https://169.254.169.254/latest/meta-data/', /link-local/],
      [`${files.url}/rec/to-private`, /private network/],
      ['ftp://pbx.example.com/call.wav', /https/],
      ['not a url', /not a valid URL/],
    ];
    for (const [url, message] of cases) {
      const r = await recording(id, url);
      expect(r.status, url).toBe(422);
      expect(r.body.error, url).toMatchObject({ code: 'validation_failed', param: 'url' });
      expect(r.body.error.message, url).toMatch(message);
    }
    expect((await detailed(id)).recording.available).toBe(false);
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['call.completed']);
    // The same call then takes a good recording.
    expect((await recording(id)).status).toBe(200);
  });

  it('a url with a user name or password is a 422 (param url) and nothing is connected to (issue 34)', async () => {
    const id = await reported();
    const cases: [string, RegExp][] = [
      [
        `http://pbx:secret@127.0.0.1:${files.port}/rec/call.wav`,
        /^url must not carry a user name or password\.$/,
      ],
      [`http://pbx@127.0.0.1:${files.port}/rec/call.wav`, /^url must not carry a user name or password\.$/],
      // Refused as the body is read: the download would name the scheme first.
      ['ftp://pbx:secret@pbx.example.com/call.wav', /^url must not carry a user name or password\.$/],
    ];
    const connections = files.connections;
    for (const [url, message] of cases) {
      const r = await recording(id, url);
      expect(r.status, url).toBe(422);
      expect(r.body.error, url).toMatchObject({ code: 'validation_failed', param: 'url' });
      expect(r.body.error.message, url).toMatch(message);
    }
    const g = await app.gql(
      'mutation($id: ID!, $url: String!) { addCallRecording(input: { id: $id, url: $url }) { call { id } } }',
      { id, url: `http://pbx:secret@127.0.0.1:${files.port}/rec/call.wav` },
      write,
    );
    expect(g.body.errors?.[0]?.extensions).toMatchObject({ code: 'validation_failed' });
    expect(g.body.errors?.[0]?.message).toMatch(/url must not carry a user name or password\.$/);
    expect(files.connections).toBe(connections);
    expect((await detailed(id)).recording.available).toBe(false);
  });

  it('an MP4 container is kept as audio/mp4 and served as call_<n>.m4a', async () => {
    const id = await reported();
    expect((await recording(id, `${files.url}/rec/call.m4a`)).status).toBe(200);
    const link = (await app.get(`/v1/calls/${id}/recording`, read)).body.data;
    expect(link.mime_type).toBe('audio/mp4');
    const got = await fetch(link.url);
    expect(got.headers.get('content-type')).toBe('audio/mp4');
    expect(got.headers.get('content-disposition')).toContain(`${id}.m4a`);
    expect(Buffer.from(await got.arrayBuffer()).equals(m4a)).toBe(true);
  });

  it('If-Match is checked before the download: a stale one is a 412 and nothing is fetched', async () => {
    const c = await create();
    const etag = c.headers.get('etag') as string;
    await app.send('PATCH', `/v1/calls/${c.body.data.id}`, { note: 'moved on' }, write);
    const before = downloads;
    const r = await recording(c.body.data.id, undefined, write, { 'if-match': etag });
    expect(r.status).toBe(412);
    expect(downloads).toBe(before);
  });
});

describe('the transcript', () => {
  it('completed after the recording: call.transcript.completed carries summary and segments; a second is a 409', async () => {
    const id = await reported({}, write, true);
    const r = await transcript(id);
    expect(r.status).toBe(200);
    expect(r.body.data.transcript).toEqual({ status: 'completed', summary: 'Moved.', segments });
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual([
      'call.completed',
      'call.recording.available',
      'call.transcript.completed',
    ]);
    expect(events[2].data).toEqual(await detailed(id));
    // The answer and the event are one object presented once (present-by-id.ts): each is compared
    // with a fresh GET, never with the other.
    expect(r.body.data).toEqual(await detailed(id));
    const again = await transcript(id, { status: 'failed', summary: undefined, segments: undefined });
    expect(again.status).toBe(409);
  });

  it('failed: call.transcript.failed, no summary and no segments', async () => {
    const id = await reported({}, write, true);
    const r = await transcript(id, { status: 'failed', summary: undefined, segments: undefined });
    expect(r.status).toBe(200);
    expect(r.body.data.transcript).toEqual({ status: 'failed', summary: null, segments: null });
    expect((await eventsOf(id)).map((e) => e.type).at(-1)).toBe('call.transcript.failed');
  });

  it('the call ordering: not before the recording, not for unanswered or zero-length calls, not where transcription is off (422 naming why)', async () => {
    const noRecording = await reported();
    const unanswered = await reported({ answered: false, duration: 0, recorded: false });
    const silent = await reported({ duration: 0 }, write, true);
    const elsewhere = await reported({}, off, true);
    const cases: [string, string, string][] = [
      [noRecording, 'recording', write],
      [unanswered, 'answered', write],
      [silent, 'duration', write],
      [elsewhere, 'ai_transcription_enabled', off],
    ];
    for (const [id, param, key] of cases) {
      const r = await transcript(id, {}, key);
      expect(r.status, param).toBe(422);
      expect(r.body.error, param).toMatchObject({ code: 'validation_failed', param });
      expect(r.body.data).toBeUndefined();
      expect(
        (await eventsOf(id)).map((e) => e.type).some((t) => t.startsWith('call.transcript')),
        param,
      ).toBe(false);
    }
  });

  it('422 naming the field of a bad body', async () => {
    const id = await reported({}, write, true);
    const cases: [Record<string, unknown>, string][] = [
      [{ status: 'done' }, 'status'],
      [{ segments: undefined }, 'segments'],
      [{ status: 'failed', segments: undefined }, 'summary'],
      [{ status: 'failed', summary: undefined }, 'segments'],
      [{ segments: [{ ...segments[0], end: -1 }] }, 'segments[0].end'],
      [{ segments: [{ ...segments[0], start: 5, end: 2 }] }, 'segments[0].end'],
      [{ segments: [{ ...segments[0], speaker: 'doctor' }] }, 'segments[0].speaker'],
      [{ segments: [{ ...segments[0], mood: 'calm' }] }, 'segments[0].mood'],
      [{ segments: [segments[1], segments[0]] }, 'segments[1].start'],
      // The call lasted 184 seconds.
      [{ segments: [{ ...segments[0], end: 190 }] }, 'segments[0].end'],
      [{ segments: Array.from({ length: 2001 }, () => segments[0]) }, 'segments'],
    ];
    for (const [body, param] of cases) {
      const r = await transcript(id, body);
      expect(r.status, JSON.stringify(body).slice(0, 200)).toBe(422);
      expect(r.body.error, JSON.stringify(body).slice(0, 200)).toMatchObject({
        code: 'validation_failed',
        param,
      });
    }
    expect((await detailed(id)).transcript.status).toBeNull();
  });
});

describe("another clinic's call", () => {
  it('is a 404 on every route, and nothing changes or is downloaded', async () => {
    const id = await reported({}, write, true);
    const before = downloads;
    expect((await app.get(`/v1/calls/${id}`, other)).status).toBe(404);
    expect((await app.get(`/v1/calls/${id}/recording`, other)).status).toBe(404);
    expect((await app.send('PATCH', `/v1/calls/${id}`, { note: 'x' }, other)).status).toBe(404);
    expect((await recording(id, undefined, other)).status).toBe(404);
    expect((await transcript(id, {}, other)).status).toBe(404);
    expect(downloads).toBe(before);
    expect((await detailed(id)).note).toBeNull();
    expect((await app.get('/v1/calls?limit=100', other)).body.data.map((c: any) => c.id)).not.toContain(id);
  });
});

describe('reads', () => {
  it('GET /v1/calls: newest first by started_at, filters by patient and time, updated_since in change order', async () => {
    const a = await reported({
      direction: 'outbound',
      from: '03-555-0100',
      to: '054-333-4444',
      started_at: '2026-10-01T10:00:00Z',
    });
    const b = await reported({ from: '054-333-4444', started_at: '2026-10-02T10:00:00Z' });
    const byPatient = await app.get(`/v1/calls?patient_id=${ids.patient3}`, read);
    expect(byPatient.status).toBe(200);
    expect(byPatient.body.data.map((c: any) => c.id)).toEqual([b, a]);
    const ranged = await app.get(
      `/v1/calls?patient_id=${ids.patient3}&from=2026-10-02T00:00:00Z&to=2026-10-03T00:00:00Z`,
      read,
    );
    expect(ranged.body.data.map((c: any) => c.id)).toEqual([b]);
    const all = await app.get('/v1/calls?limit=100', read);
    const times = all.body.data.map((c: any) => c.started_at);
    expect([...times].sort().reverse()).toEqual(times);
    app.clock.set('2026-11-21T08:00:00Z');
    await app.send('PATCH', `/v1/calls/${a}`, { note: 'changed last' }, write);
    const synced = await app.get('/v1/calls?updated_since=2026-11-20T00:00:00Z&limit=100', read);
    expect(synced.body.data.at(-1).id).toBe(a);
    const page = await app.get(`/v1/calls?patient_id=${ids.patient3}&limit=1`, read);
    const next = await app.get(
      `/v1/calls?patient_id=${ids.patient3}&limit=1&cursor=${page.body.next_cursor}`,
      read,
    );
    expect([...page.body.data, ...next.body.data].map((c: any) => c.id)).toEqual([b, a]);
    for (const [q, param] of [
      ['patient_id=call_1', 'patient_id'],
      ['from=soon', 'from'],
      ['limit=0', 'limit'],
    ]) {
      const r = await app.get(`/v1/calls?${q}`, read);
      expect(r.status, q).toBe(422);
      expect(r.body.error.param).toBe(param);
    }
    expect((await app.get('/v1/calls/call_999999', read)).status).toBe(404);
    expect((await app.get('/v1/calls/pat_1', read)).status).toBe(404);
  });

  it('GraphQL: the calls connection and node(id:) agree with REST; mutations name their param', async () => {
    const id = await reported({ from: '054-111-2222', started_at: '2026-10-05T10:00:00Z' });
    const gql = await app.gql(
      `query($p: String) { calls(first: 10, patientId: $p) { edges { node { id from patient { id } recording { available } transcript { status } } } } }`,
      { p: ids.patient2 },
      read,
    );
    expect(gql.body.errors).toBeUndefined();
    const nodes = gql.body.data.calls.edges.map((e: any) => e.node);
    expect(nodes.find((n: any) => n.id === id)).toEqual({
      id,
      from: '0541112222',
      patient: { id: ids.patient2 },
      recording: { available: false },
      transcript: { status: null },
    });
    const node = await app.gql(
      `query($id: ID!) { node(id: $id) { id ... on Call { duration } } }`,
      { id },
      read,
    );
    expect(node.body.data.node).toEqual({ id, duration: 184 });
    expect(
      (await app.gql(`query($id: ID!) { node(id: $id) { id } }`, { id }, other)).body.data.node,
    ).toBeNull();

    const created = await app.gql(
      `mutation($input: CreateCallInput!) { createCall(input: $input) { call { id direction patient { id } } } }`,
      { input: { ...endedInput, direction: 'OUTBOUND', from: '03-555-0100', to: '050-123-4567' } },
      write,
    );
    expect(created.body.errors).toBeUndefined();
    expect(created.body.data.createCall.call).toMatchObject({
      direction: 'OUTBOUND',
      patient: { id: ids.patient },
    });
    const bad = await app.gql(
      `mutation($input: CreateCallInput!) { createCall(input: $input) { call { id } } }`,
      { input: { ...endedInput, duration: -5 } },
      write,
    );
    expect(bad.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.duration',
    });
    const rec = await app.gql(
      `mutation($id: ID!, $url: String!) { addCallRecording(input: { id: $id, url: $url }) { call { recording { available } } } }`,
      { id: created.body.data.createCall.call.id, url: `${files.url}/rec/call.wav` },
      write,
    );
    expect(rec.body.errors).toBeUndefined();
    expect(rec.body.data.addCallRecording.call.recording.available).toBe(true);
    const stale = await app.gql(
      `mutation($id: ID!) { updateCall(input: { id: $id, note: "x", expectedUpdatedAt: "2020-01-01T00:00:00Z" }) { call { id } } }`,
      { id },
      write,
    );
    expect(stale.body.errors[0].extensions.code).toBe('precondition_failed');
  });
});

describe('the demo seed', () => {
  it('has calls in every state, their recordings served as audio, and a clinic with transcription on', async () => {
    const demo = await seedDemo(app.orm.em.fork(), { now: app.clock.now() });
    for (const [key, transcribed] of [
      [demo.keys.readAll.key, true],
      [demo.keys.vetReadAll.key, false],
    ] as const) {
      const calls = (await app.get('/v1/calls?limit=100', key)).body.data;
      const some = (f: (c: any) => boolean) => calls.some(f);
      expect(some((c) => !c.answered && c.duration === 0)).toBe(true);
      expect(some((c) => c.direction === 'outbound')).toBe(true);
      expect(some((c) => c.answered && !c.recorded)).toBe(true);
      expect(some((c) => c.recording.available && c.transcript.status === null)).toBe(true);
      expect(some((c) => c.patient === null)).toBe(true);
      expect(
        some(
          (c) => c.transcript.status === 'completed' && c.transcript.summary && c.transcript.segments.length,
        ),
      ).toBe(transcribed);
      expect(some((c) => c.transcript.status === 'failed')).toBe(transcribed);
      // Transcripts only where the rules allow them.
      for (const c of calls.filter((x: any) => x.transcript.status))
        expect(c.answered && c.duration > 0 && c.recording.available).toBe(true);
      const recorded = calls.find((c: any) => c.recording.available);
      const link = (await app.get(`/v1/calls/${recorded.id}/recording`, key)).body.data;
      const got = await fetch(link.url);
      expect(got.headers.get('content-type')).toBe('audio/wav');
      expect(
        Buffer.from(await got.arrayBuffer())
          .subarray(0, 4)
          .toString('latin1'),
      ).toBe('RIFF');
    }
  });
});

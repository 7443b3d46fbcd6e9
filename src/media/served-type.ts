import { fileTypeFromBuffer } from 'file-type';

/**
 * How a stored file is served (docs/media.md, "What a link serves"): the type kept only when its
 * bytes still sniff as it, inline only for raster images. A browser renders these as a picture
 * and runs no script in them; SVG, HTML, XML and PDF can carry script and are never inline. The
 * sniffer (file-type) recognises no text format, so none of those can be kept from the bytes.
 */
const INLINE = new Set([
  'image/png',
  'image/apng',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
]);

/** What a recording in a video container (as the sniffer names it) is kept as (src/media/download.ts). */
export const CONTAINER_AS_AUDIO: Readonly<Record<string, string>> = {
  'video/webm': 'audio/webm',
  'video/mp4': 'audio/mp4',
};

export const OPAQUE = 'application/octet-stream';

/**
 * The type to serve a stored file with, and whether inline. A row whose type its bytes do not
 * sniff as (a row from before types were sniffed, a network's declared type, a row written by
 * hand) is served as `application/octet-stream`, an attachment: a stored `image/svg+xml` never
 * reaches a browser as SVG.
 */
export async function servedType(bytes: Buffer, stored: string): Promise<{ mime: string; inline: boolean }> {
  const sniffed = (await fileTypeFromBuffer(bytes))?.mime;
  const same = sniffed !== undefined && (sniffed === stored || CONTAINER_AS_AUDIO[sniffed] === stored);
  const mime = same ? stored : OPAQUE;
  return { mime, inline: INLINE.has(mime) };
}

import type { IncomingMessage, ServerResponse } from 'node:http';

/** The body, 'too large' past `max` bytes (reading stops), null if the client went away. */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'too large' | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.removeAllListeners('data');
        req.resume();
        resolve('too large');
      } else chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    // A client that goes away mid-body gets no answer.
    req.on('error', () => resolve(null));
  });
}

/** Writes a fetch Response (Yoga's) to a node:http response, unless one was sent already. */
export async function sendResponse(res: ServerResponse, response: Response) {
  if (res.headersSent) return; // answered already (the request's deadline)
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const body = Buffer.from(await response.arrayBuffer());
  res.writeHead(response.status, headers);
  res.end(body);
}

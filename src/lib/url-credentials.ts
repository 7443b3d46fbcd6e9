/**
 * A URL's user name and password (`https://user:secret@host/`) would go to its host as Basic
 * credentials on every fetch, and stay wherever the URL is stored or logged: a URL the service
 * fetches for a caller (a webhook's, a chat media URL, a call recording's) carries none, refused
 * with a 422 naming the field before any connection (src/services/webhooks/webhooks.ts,
 * src/media/download.ts).
 */
export const CREDENTIALS_REFUSAL = 'must not carry a user name or password';

/** True when the URL has a user name or a password; false for one that is not a URL (refused elsewhere). */
export function carriesCredentials(url: string | URL): boolean {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return false;
  }
  return u.username !== '' || u.password !== '';
}

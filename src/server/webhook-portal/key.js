/**
 * The portal's key, pasted once and kept in the origin's localStorage until forgotten
 * (docs/webhook-portal.md: the origin's other pages can read it too). A secret shown on creation
 * or rotation is never stored: it lives in the page until the person is done with it.
 */

const STORE = 'clinic-gateway.webhooks.key';

export function loadKey() {
  try {
    return localStorage.getItem(STORE) ?? '';
  } catch {
    return '';
  }
}

export function saveKey(key) {
  try {
    localStorage.setItem(STORE, key);
  } catch {}
}

export function forgetKey() {
  try {
    localStorage.removeItem(STORE);
  } catch {}
}

/** A pasted key may come as the header value it is used in. */
export const cleanKey = (v) => v.trim().replace(/^Bearer\s+/i, '');

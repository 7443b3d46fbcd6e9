/**
 * The inbox's two keys, pasted once and kept in the origin's localStorage until forgotten
 * (docs/chat.md, The live inbox: the origin's other pages can read them too).
 */

const STORE = { read: 'clinic-gateway.inbox.readKey', write: 'clinic-gateway.inbox.writeKey' };

export function loadKeys() {
  try {
    return { read: localStorage.getItem(STORE.read) ?? '', write: localStorage.getItem(STORE.write) ?? '' };
  } catch {
    return { read: '', write: '' };
  }
}

export function saveKeys(keys) {
  try {
    localStorage.setItem(STORE.read, keys.read);
    if (keys.write) localStorage.setItem(STORE.write, keys.write);
    else localStorage.removeItem(STORE.write);
  } catch {}
}

export function forgetKeys() {
  try {
    localStorage.removeItem(STORE.read);
    localStorage.removeItem(STORE.write);
  } catch {}
}

/** A pasted key may come as the header value it is used in. */
export const cleanKey = (v) => v.trim().replace(/^Bearer\s+/i, '');

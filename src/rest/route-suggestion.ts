import leven from 'leven';
import { matchRoute, restRoutes } from './routes.ts';

/**
 * "Did you mean": the route an unknown path was most likely meant for, by edit distance over the
 * route table (leven, a Levenshtein distance). The request's own segments stand in for the
 * route's parameters, so `/patient/pat_7` is compared with `/patients/pat_7` and only the words
 * count. A suggestion is made only for a near miss (a typo, a missing plural), never for a path
 * that merely shares a prefix, and never computed over a long path: a 404 costs what it did.
 */
const MAX_DISTANCE = 3;
const MAX_PATH = 200;

const templates = [...new Set(restRoutes.map((r) => r.path))];

/** The nearest route path to `path` (under /v1, without the prefix), with its methods; none when nothing is near. */
export function nearestRoute(path: string): { path: string; methods: string[] } | undefined {
  if (path.length > MAX_PATH) return undefined;
  const given = path.replace(/\/+$/, '');
  const segments = given.split('/');
  let best: { path: string; distance: number } | undefined;
  for (const template of templates) {
    const filled = template
      .split('/')
      .map((s, i) => (s.startsWith(':') ? (segments[i] ?? s) : s))
      .join('/');
    // The distance is at least the lengths' difference: most routes are ruled out without it, so
    // a 404, which a client without a key may ask for, costs what it did.
    if (Math.abs(given.length - filled.length) > MAX_DISTANCE) continue;
    const distance = leven(given, filled);
    if (!best || distance < best.distance) best = { path: filled, distance };
  }
  if (!best || best.distance > Math.min(MAX_DISTANCE, Math.floor(best.path.length / 3))) return undefined;
  return { path: best.path, methods: matchRoute('GET', best.path).allowed };
}

/** The end of a 404's message: ` Did you mean /v1/patients (GET, POST)?`, or nothing. */
export function suggestionFor(path: string): string {
  const near = nearestRoute(path);
  return near ? ` Did you mean /v1${near.path} (${near.methods.join(', ')})?` : '';
}

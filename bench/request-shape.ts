import type { CapturedStatement } from './statement-capture.ts';

/**
 * The shape of a benchmarked request: what decides which statements the app runs for it (the
 * path, which parameters are present, the page size; for GraphQL the document). The harness keys
 * the statements it captured from the app by it (bench/patients.ts), and the raw server finds a
 * request's statements by it (bench/raw-server.ts), so both compute it here.
 */
export function requestShape(method: string, url: URL, graphqlDocument?: string): string {
  if (graphqlDocument !== undefined) return `${method} ${url.pathname} ${graphqlDocument}`;
  const names = [...new Set(url.searchParams.keys())].sort();
  const params = names.map((n) => (n === 'limit' ? `limit=${url.searchParams.get('limit')}` : n));
  return `${method} ${url.pathname}?${params.join('&')}`;
}

/** What bench/patients.ts hands the raw server (BENCH_STATEMENTS, a JSON file). */
export interface CapturedShapes {
  /** The app's statements for one request of each shape, in the order it ran them. */
  shapes: Record<string, CapturedStatement[]>;
}

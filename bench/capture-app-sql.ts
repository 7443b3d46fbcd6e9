/**
 * The app's statements for each benchmarked request shape, captured from a process of its own
 * (bench/server.ts with BENCH_CAPTURE=1, never the one being timed): each request is sent twice to
 * warm the app (key lookup, statement shapes), then recorded twice; the two recordings must agree,
 * so what is handed to the raw server is what the app runs on every such request.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Server } from './processes.ts';
import type { CapturedShapes } from './request-shape.ts';
import type { CapturedStatement } from './statement-capture.ts';

export interface CaptureRequest {
  id: string;
  shape: string;
  send(server: Server): Promise<void>;
}

export async function captureAppStatements(app: Server, requests: CaptureRequest[]): Promise<CapturedShapes> {
  const shapes: CapturedShapes['shapes'] = {};
  const record = async (r: CaptureRequest) => {
    await app.ask('capture-start', 'capture-started');
    await r.send(app);
    return (await app.ask<{ statements: CapturedStatement[] }>('capture-stop', 'captured')).statements;
  };
  for (const r of requests) {
    await r.send(app);
    await r.send(app);
    const first = await record(r);
    const second = await record(r);
    if (!isDeepStrictEqual(first, second))
      throw new Error(`the app ran different statements for two identical requests of ${r.id}`);
    const known = shapes[r.shape];
    if (known && !isDeepStrictEqual(known, first))
      throw new Error(
        `${r.id}: the app's statements differ from another case's of the same shape ${r.shape}`,
      );
    shapes[r.shape] = first;
  }
  return { shapes };
}

/** Where two statement lists first differ, or null. */
export function statementDifference(app: CapturedStatement[], raw: CapturedStatement[]): string | null {
  if (app.length !== raw.length) return `the app ran ${app.length} statements, raw ${raw.length}`;
  for (let i = 0; i < app.length; i++) {
    for (const k of ['text', 'name', 'values', 'rowMode'] as const) {
      if (!isDeepStrictEqual(app[i][k], raw[i][k]))
        return `statement ${i + 1}'s ${k}: app ${JSON.stringify(app[i][k]).slice(0, 200)}, raw ${JSON.stringify(raw[i][k]).slice(0, 200)}`;
    }
  }
  return null;
}

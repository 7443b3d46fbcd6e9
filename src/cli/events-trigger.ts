import { randomUUID } from 'node:crypto';
import { AppError, type ErrorCode } from '../lib/errors.ts';
import { urlHint } from './service-url.ts';

/**
 * `events trigger <type>` (as Stripe's CLI has it): asks the service for a sample event of the
 * type (POST /v1/events, the triggerEvent write), which it delivers to every enabled subscription
 * of the key's clinic receiving the type, through the real queue and signing. No database: the
 * service's API is the whole path, so what the receiver gets is exactly what a delivery is.
 */
export interface TriggerOptions {
  /** The service, http(s)://host:port. */
  url: string;
  /** Whether --url named it (else it is the default from PORT and HOST): the error says what to do. */
  urlGiven?: boolean;
  key: string;
  type: string;
}

export async function triggerSample(opts: TriggerOptions): Promise<{ id: string; type: string }> {
  let res: Response;
  try {
    res = await fetch(new URL('/v1/events', opts.url), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${opts.key}`,
        'content-type': 'application/json',
        // A retried command must not send the sample twice.
        'idempotency-key': randomUUID(),
      },
      body: JSON.stringify({ type: opts.type }),
    });
  } catch (err) {
    // fetch says only "fetch failed"; its cause names the fault (ECONNREFUSED …).
    const cause = (err as Error).cause;
    const why = cause instanceof Error ? cause.message : (err as Error).message;
    throw new AppError(
      'service_unavailable',
      `The service at ${opts.url} did not answer (${why}); ${urlHint(opts.url, opts.urlGiven ?? true)}`,
    );
  }
  const body = (await res.json().catch(() => null)) as any;
  if (res.status !== 202) {
    const e = body?.error;
    throw new AppError(
      (e?.code ?? 'internal_error') as ErrorCode,
      e?.message ?? `The service answered ${res.status}.`,
    );
  }
  return { id: body.data.id, type: body.data.type };
}

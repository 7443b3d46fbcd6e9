/**
 * The retry schedule and the auto-disable rule of webhook deliveries (issue 17, Delivery;
 * docs/events.md, Delivery). Pure functions of the attempt number, the injected clock's time and
 * a random number, so tests walk them through with a FixedClock.
 */

/**
 * Seconds to wait after failed attempt n (index n - 1) before attempt n + 1: nine attempts in
 * about 24 hours (10 s, 1 min, 5 min, 30 min, 2 h, 5 h, 8 h, 8 h after the first), then none.
 * Short first steps catch a receiver that was restarting; the long tail outlasts a day's outage.
 */
export const RETRY_DELAYS_SECONDS: readonly number[] = [
  10,
  60,
  5 * 60,
  30 * 60,
  2 * 3600,
  5 * 3600,
  8 * 3600,
  8 * 3600,
];

/** The last attempt number the schedule makes (the first plus one per delay). */
export const MAX_SCHEDULED_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/**
 * ±20 %: many events failing together (a receiver down) spread their retries instead of coming
 * back as one burst when it returns.
 */
export const JITTER = 0.2;

/**
 * Seconds until the scheduled attempt after failed attempt `attempt`, or null when the schedule is
 * spent. `random` in [0, 1) (Math.random in production, a fixed value in tests).
 */
export function retryDelaySeconds(attempt: number, random: number = Math.random()): number | null {
  const base = RETRY_DELAYS_SECONDS[attempt - 1];
  if (base === undefined) return null;
  return Math.max(1, Math.round(base * (1 - JITTER + 2 * JITTER * random)));
}

/**
 * A subscription whose every attempt has failed for this long (no success in between) is
 * disabled: three days, so a receiver down over a weekend is not cut off before anyone can look,
 * and every event of the first day has run out its own retries first.
 */
export const DISABLE_AFTER_HOURS = 72;

/** Whether a subscription failing since `failingSince` is to be disabled at `now`. */
export function shouldDisable(failingSince: Date | null, now: Date): boolean {
  return failingSince != null && now.getTime() - failingSince.getTime() >= DISABLE_AFTER_HOURS * 3600_000;
}

/** The reason a disabled subscription shows (`disabled_reason`). */
export const disabledReason = (failingSince: Date) =>
  `Every delivery attempt failed from ${failingSince.toISOString()} for ${DISABLE_AFTER_HOURS} hours; recover it (POST /v1/webhooks/{id}/recover) once the endpoint answers 2xx again.`;

/** The schedule as people read it (the OpenAPI descriptions): "10 s, 1 min, … 8 h". */
export const RETRY_DELAYS_TEXT = RETRY_DELAYS_SECONDS.map((s) =>
  s < 60 ? `${s} s` : s < 3600 ? `${s / 60} min` : `${s / 3600} h`,
).join(', ');

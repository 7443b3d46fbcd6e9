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
 * A subscription failing for this long is disabled: three days, so a receiver down over a weekend
 * is not cut off before anyone can look, and every event of the first day has run out its own
 * retries first. "Failing" is a streak (`failing_since`): failed attempts with no success between
 * them and no quiet gap longer than STREAK_GAP_SECONDS, not merely time without a success, so one
 * failure, days without events, then another failure is two short streaks, not a 72-hour one.
 */
export const DISABLE_AFTER_HOURS = 72;

/**
 * The longest pause between two failures of one streak, in seconds: the schedule's longest wait
 * with the most jitter (8 h + 20 %), plus an hour for the attempt itself and a queue running
 * late. A failing event's own retries always fall within it, so an outage with steady traffic
 * (even one event a day, each failing its ~24-hour schedule) is one streak; a failure after a
 * longer quiet time (no events, nothing attempted) starts a new one.
 */
export const STREAK_GAP_SECONDS = Math.round(Math.max(...RETRY_DELAYS_SECONDS) * (1 + JITTER)) + 3600;

/** A failure at `now` continues the streak only if the previous one ended at or after this. */
export const streakBrokenBefore = (now: Date): Date => new Date(now.getTime() - STREAK_GAP_SECONDS * 1000);

/** Whether a subscription whose streak began at `failingSince` is to be disabled at `now`. */
export function shouldDisable(failingSince: Date | null, now: Date): boolean {
  return failingSince != null && now.getTime() - failingSince.getTime() >= DISABLE_AFTER_HOURS * 3600_000;
}

/** The reason a disabled subscription shows (`disabled_reason`). */
export const disabledReason = (failingSince: Date) =>
  `Delivery attempts kept failing for ${DISABLE_AFTER_HOURS} hours, from ${failingSince.toISOString()} on (no success, and no pause longer than ${STREAK_GAP_SECONDS / 3600} hours between failures); recover it (POST /v1/webhooks/{id}/recover) once the endpoint answers 2xx again.`;

/** The schedule as people read it (the OpenAPI descriptions): "10 s, 1 min, … 8 h". */
export const RETRY_DELAYS_TEXT = RETRY_DELAYS_SECONDS.map((s) =>
  s < 60 ? `${s} s` : s < 3600 ? `${s / 60} min` : `${s / 3600} h`,
).join(', ');

/**
 * The live part of the portal. The API streams events (the `events` subscription) but not
 * delivery attempts, and a sample event is never streamed: the log and the list are read again
 * every POLL_SECONDS while the tab is shown, and at once when it is shown again.
 */

export const POLL_SECONDS = 2;

/** Calls `tick` every POLL_SECONDS (never two at once) until the answered function is called. */
export function startPolling(tick) {
  let timer;
  let stopped = false;
  let running = false;
  const run = async () => {
    clearTimeout(timer);
    if (stopped || running) return;
    running = true;
    if (!document.hidden) await tick().catch(() => {});
    running = false;
    if (!stopped) timer = setTimeout(run, POLL_SECONDS * 1000);
  };
  const shown = () => {
    if (!document.hidden) run();
  };
  document.addEventListener('visibilitychange', shown);
  timer = setTimeout(run, POLL_SECONDS * 1000);
  return () => {
    stopped = true;
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', shown);
  };
}

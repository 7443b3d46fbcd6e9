/**
 * Runs `work` for at most `ms`: past it, the answer is no longer waited for and `onTimeout`'s
 * error is thrown. `work` gets a signal that aborts then, to end its own request; one that does
 * not heed it is not waited for either.
 */
export function bounded<T>(
  work: (signal: AbortSignal) => Promise<T>,
  ms: number,
  onTimeout: () => Error,
): Promise<T> {
  const signal = AbortSignal.timeout(ms);
  return Promise.race([
    work(signal),
    new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(onTimeout()))),
  ]);
}

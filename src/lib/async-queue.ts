/**
 * A push-fed async iterator for subscriptions: values pushed wait in order until read; `return()`
 * (the client completed, the socket closed) ends a read that is waiting and runs `onClose` once,
 * at once, whereas an async generator parked on an `await` would only notice at its next value.
 */
export interface AsyncQueue<T> extends AsyncIterableIterator<T> {
  push(value: T): void;
  /** Ends the iteration with an error (the next read throws it). */
  fail(error: unknown): void;
  readonly closed: boolean;
}

export function asyncQueue<T>(onClose: () => void): AsyncQueue<T> {
  const values: T[] = [];
  let waiting: ((r: IteratorResult<T>) => void) | null = null;
  let rejectWaiting: ((e: unknown) => void) | null = null;
  let failure: { error: unknown } | null = null;
  let closed = false;

  const close = () => {
    if (closed) return;
    closed = true;
    values.length = 0;
    onClose();
  };

  const queue: AsyncQueue<T> = {
    get closed() {
      return closed;
    },
    push(value) {
      if (closed) return;
      if (waiting) {
        const resolve = waiting;
        waiting = rejectWaiting = null;
        resolve({ value, done: false });
      } else values.push(value);
    },
    fail(error) {
      if (closed) return;
      if (rejectWaiting) {
        const reject = rejectWaiting;
        waiting = rejectWaiting = null;
        close();
        reject(error);
      } else failure = { error };
    },
    next() {
      if (values.length) return Promise.resolve({ value: values.shift() as T, done: false });
      if (failure) {
        const { error } = failure;
        failure = null;
        close();
        return Promise.reject(error);
      }
      if (closed) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => {
        waiting = resolve;
        rejectWaiting = reject;
      });
    },
    return() {
      close();
      if (waiting) {
        const resolve = waiting;
        waiting = rejectWaiting = null;
        resolve({ value: undefined, done: true });
      }
      return Promise.resolve({ value: undefined, done: true });
    },
    throw(error) {
      queue.return?.();
      return Promise.reject(error);
    },
    [Symbol.asyncIterator]() {
      return queue;
    },
  };
  return queue;
}

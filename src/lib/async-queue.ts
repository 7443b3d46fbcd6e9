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
  /** Resolves once fewer than `n` values wait unread (or the queue closed): a producer's pace. */
  below(n: number): Promise<void>;
}

export interface QueueBounds {
  /**
   * Most values waiting unread: a push beyond it ends the iteration with `overflow()`'s error
   * instead of holding, in memory, everything a client that does not read would be sent.
   */
  maxBuffered: number;
  overflow: () => unknown;
}

export function asyncQueue<T>(onClose: () => void, bounds?: QueueBounds): AsyncQueue<T> {
  const values: T[] = [];
  let paced: { n: number; resolve: () => void } | null = null;
  const release = () => {
    if (paced && (closed || detached || values.length < paced.n)) {
      const { resolve } = paced;
      paced = null;
      resolve();
    }
  };
  let waiting: ((r: IteratorResult<T>) => void) | null = null;
  let rejectWaiting: ((e: unknown) => void) | null = null;
  let failure: { error: unknown } | null = null;
  let closed = false;

  let detached = false;
  const detach = () => {
    if (detached) return;
    detached = true;
    onClose();
  };
  const close = () => {
    if (closed) return;
    closed = true;
    values.length = 0;
    detach();
    release();
  };

  const queue: AsyncQueue<T> = {
    /** Also once let go of after an overflow: a producer stops. */
    get closed() {
      return closed || detached;
    },
    push(value) {
      if (closed) return;
      if (waiting) {
        const resolve = waiting;
        waiting = rejectWaiting = null;
        resolve({ value, done: false });
      } else if (bounds && values.length >= bounds.maxBuffered) {
        // Nothing more is kept: the unread values go, the source is let go at once, and the
        // client's next read gets the error.
        values.length = 0;
        failure = { error: bounds.overflow() };
        detach();
        release();
      } else if (!failure) values.push(value);
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
    below(n) {
      if (closed || detached || values.length < n) return Promise.resolve();
      return new Promise((resolve) => {
        paced = { n, resolve };
      });
    },
    next() {
      if (values.length) {
        const value = values.shift() as T;
        release();
        return Promise.resolve({ value, done: false });
      }
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

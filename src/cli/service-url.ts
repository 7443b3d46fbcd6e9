import { loadConfig } from '../lib/config.ts';

/**
 * Where the commands that talk to a running service (`events trigger`, `events listen`) find it
 * when `--url` is not given: where `npm start` listens with the same environment (PORT, HOST), so
 * a service started with PORT=4100 is reached by a CLI run with PORT=4100. A wildcard HOST
 * (0.0.0.0, ::) is reached on loopback.
 */
export function defaultServiceUrl(): string {
  const { PORT, HOST } = loadConfig();
  const host = ['', '0.0.0.0', '::'].includes(HOST) ? '127.0.0.1' : HOST.includes(':') ? `[${HOST}]` : HOST;
  return `http://${host}:${PORT}`;
}

/** What `--url` says in the commands' help. */
export const URL_OPTION_HELP =
  'the service (default: http://127.0.0.1:$PORT, as npm start listens; PORT defaults to 4000)';

/** The end of a "did not answer" error: how to point the command at the service. */
export const urlHint = (url: string, given: boolean) =>
  given
    ? `is it running there (npm start)?`
    : `is it running (npm start)? ${url} is the default, from PORT and HOST; give the service's address with --url.`;

import { type ChildProcess, fork } from 'node:child_process';

/**
 * `npm run worker` as a real child process (src/worker.ts) on `databaseUrl` (the test clinics'
 * receivers on loopback are allowed by their mode); resolves once it says it is ready, rejects
 * with what it printed (LOG_LEVEL in `env`: silent by default) if it exits first. The caller
 * kills what it started (`children`).
 */
export function startWorkerProcess(
  databaseUrl: string,
  children: ChildProcess[],
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  const child = fork('src/worker.ts', [], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}:\n${out}`)));
  });
}

/** Polls `ok` every 20 ms until it holds, or fails naming `what` after `ms`. */
export async function waitUntil(ok: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

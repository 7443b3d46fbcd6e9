import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const node = path.join(root, 'node_modules/.bin/node');

export interface ServiceProcess {
  url: string;
  /** Everything it printed so far (the banner holds the demo keys of a first start). */
  out(): string;
  child: ChildProcess;
}

/**
 * `npm start` as a real child process (src/main.ts, or another `script` that prints "listening on
 * <url>") with `env`; resolves when it listens, rejects with its output (and `code`) if it exits or
 * has not listened within 45 s. The caller kills what it started (`children`).
 */
export function startServiceProcess(
  env: Record<string, string>,
  children: ChildProcess[],
  script = 'src/main.ts',
): Promise<ServiceProcess> {
  const child = spawn(node, [script], {
    cwd: root,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service not ready:\n${out}`)), 45_000);
    child.stdout?.on('data', () => {
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ url, out: () => out, child });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`service exited with ${code}:\n${out}`), { code, out }));
    });
  });
}

/** SIGKILLs every child still running and waits for each to exit. */
export async function killAll(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(async (c) => {
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGKILL');
      await exited;
    }),
  );
}

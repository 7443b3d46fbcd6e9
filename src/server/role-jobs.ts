import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../lib/clock.ts';
import type { Limits } from '../lib/limits.ts';
import type { Role } from '../lib/roles.ts';
import type { SandboxNetwork } from '../network/sandbox.ts';
import type { QueuedReceipts } from '../network/sandbox-receipts.ts';
import { chatSendWorkers, type SendWorkerDeps } from '../services/chat/send-worker.ts';
import { deliveryWorker } from '../webhooks/worker.ts';
import { type QueueTuning, type RunningJobs, startJobs } from './jobs.ts';

/**
 * The job queue as a process's roles want it (src/lib/roles.ts): the one place where roles become
 * workers, for the server (src/server/start.ts) and a process without it (src/server/run-process.ts).
 */
export async function startRoleJobs(opts: {
  orm: MikroORM;
  clock: Clock;
  limits: Limits;
  tuning?: QueueTuning | undefined;
  roles: readonly Role[];
  /** What chat sends need here (the networks, media links); absent, sends are left to others. */
  chat?: Pick<SendWorkerDeps, 'networks' | 'mediaLink'> | undefined;
  /**
   * This process's sandbox network and its receipts (src/network/sandbox-receipts.ts): posted
   * wherever the sandbox runs, whatever the roles say, as it stands for the network, not for the
   * service's workers.
   */
  sandbox?: { network: SandboxNetwork; receipts: QueuedReceipts } | undefined;
}): Promise<RunningJobs> {
  const { orm, clock, roles } = opts;
  const jobs = await startJobs({
    orm,
    clock,
    ...(opts.tuning ? { tuning: opts.tuning } : {}),
    // Every process asks for the cluster's sweeps each period; those with the role run them.
    sweeps: { retentionDays: opts.limits.eventRetentionDays, work: roles.includes('sweeps') },
    workers: [
      ...(roles.includes('deliveries')
        ? [deliveryWorker({ em: orm.em, clock, timeoutMs: opts.limits.webhookTimeoutMs })]
        : []),
      ...(roles.includes('sends') && opts.chat ? chatSendWorkers({ em: orm.em, clock, ...opts.chat }) : []),
    ],
  });
  const sandbox = opts.sandbox;
  try {
    if (sandbox) await sandbox.receipts.start(jobs.queue, (r) => sandbox.network.postReceipt(r));
  } catch (err) {
    await jobs.stop(0);
    throw err;
  }
  return jobs;
}

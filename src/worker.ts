import { loadConfig } from './lib/config.ts';
import { WORKER_ROLES } from './lib/roles.ts';
import { runProcess } from './server/run-process.ts';

/**
 * `npm run worker`: the service without its server (src/lib/roles.ts: deliveries, sends, sweeps),
 * for scale. Any number may run beside the instances (ROLES=http,sends,sweeps there leaves
 * deliveries to them): the queue hands each job to one process. Same configuration as `npm start`.
 */
await runProcess(loadConfig(), WORKER_ROLES);

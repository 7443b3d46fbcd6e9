import { loadConfig } from './lib/config.ts';
import { SERVICE_ROLES } from './lib/roles.ts';
import { runProcess } from './server/run-process.ts';

/** `npm start`: the service with every role (src/lib/roles.ts), unless ROLES says otherwise. */
await runProcess(loadConfig(), SERVICE_ROLES);

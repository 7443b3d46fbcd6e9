import type { GraphQLSchema } from 'graphql';
import { executeOnTwin } from '../lib/compiled-execute.ts';
import { builder } from './builder.ts';
import { executionTwin } from './execution-schema.ts';
import './patients/types.ts';
import './patients/queries.ts';
import './catalog/catalog.ts';
import './chat/types.ts';
import './chat/queries.ts';
import './chat/mutations.ts';
import './chat/subscriptions.ts';
import './records.ts';
import './availability/availability.ts';
import './calls/recording.ts';
import './events/events.ts';
import './events/subscriptions.ts';
import './webhooks/webhooks.ts';
import './writes.ts';

type Schemas = {
  publicSchema: GraphQLSchema;
  restSchema: GraphQLSchema;
};

const built = new Map<boolean, Schemas>();

/**
 * Both sub-graphs of the one builder: Public for /graphql, Rest for /v1 (src/rest/direct.ts; SOFA
 * documents it). `sandbox`: the Public schema has the sandbox network's mutations
 * (`sandboxInbound`, `sandboxReact`), for a service whose network is the sandbox; the committed
 * schema.graphql is the one without them.
 */
export function schemas(opts: { sandbox?: boolean } = {}): Schemas {
  const sandbox = opts.sandbox ?? false;
  let s = built.get(sandbox);
  if (!s) {
    const restSchema =
      built.get(!sandbox)?.restSchema ?? builder.toSchema({ subGraph: 'Rest', sortSchema: false });
    s = {
      publicSchema: builder.toSchema({
        subGraph: sandbox ? ['Public', 'Sandbox'] : 'Public',
        sortSchema: false,
      }),
      restSchema,
    };
    executeOnTwin(s.publicSchema, executionTwin(s.publicSchema));
    built.set(sandbox, s);
  }
  return s;
}

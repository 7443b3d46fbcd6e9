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

let built: Schemas | undefined;

/**
 * Both sub-graphs of the one builder: Public for /graphql, Rest for /v1 (src/rest/direct.ts; SOFA
 * documents it). The Public schema holds the Sandbox sub-graph too (`sandboxInbound`,
 * `sandboxReact`): every service has test clinics' sandbox, and the mutations refuse a live
 * clinic's key (docs/test-mode.md).
 */
export function schemas(): Schemas {
  if (!built) {
    built = {
      publicSchema: builder.toSchema({ subGraph: ['Public', 'Sandbox'], sortSchema: false }),
      restSchema: builder.toSchema({ subGraph: 'Rest', sortSchema: false }),
    };
    executeOnTwin(built.publicSchema, executionTwin(built.publicSchema));
  }
  return built;
}

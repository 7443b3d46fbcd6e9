import type { GraphQLSchema } from 'graphql';
import { builder } from './builder.ts';
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

let built: { publicSchema: GraphQLSchema; restSchema: GraphQLSchema } | undefined;

/** Both sub-graphs of the one builder: Public for /graphql, Rest for /v1 (src/rest/direct.ts; SOFA documents it). */
export function schemas() {
  built ??= {
    publicSchema: builder.toSchema({ subGraph: 'Public', sortSchema: false }),
    restSchema: builder.toSchema({ subGraph: 'Rest', sortSchema: false }),
  };
  return built;
}

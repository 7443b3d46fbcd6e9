import type { IncomingMessage, ServerResponse } from 'node:http';
import { scopeToSee } from '../auth/event-scopes.ts';
import { EVENT_TYPES, eventCatalog } from '../events/types.ts';
import { requestOrigin, type TrustProxy } from '../lib/client-address.ts';
import { ERROR_REFERENCE_PATH } from '../lib/error-docs.ts';
import { type Document, documentLinks } from './doc-pages.ts';
import { escapeHtml, renderPage, sendPage } from './page-layout.ts';
import { webhookCalls } from './webhook-calls.ts';

/**
 * The page at `/`: what the service is and where each of its faces lives, the two calls that set
 * up a webhook, the event catalog (src/events/types.ts, the one list) so a newcomer sees what
 * webhooks and subscriptions carry, and the documents of docs/ (doc-pages.ts).
 */

interface Place {
  href: string;
  name: string;
  what: string;
}

const PLACES: readonly Place[] = [
  {
    href: '/v1/docs',
    name: 'REST API docs',
    what: 'Every /v1 operation, its parameters and answers, with try-it-out. The contract: /v1/openapi.json.',
  },
  {
    href: '/graphql',
    name: 'GraphQL console',
    what: 'GraphiQL with the schema, autocompletion and subscriptions over graphql-ws.',
  },
  {
    href: '/inbox',
    name: 'Live inbox',
    what: "A clinic's chat conversations, updated live, with a chat:read key.",
  },
  {
    href: '/webhooks',
    name: 'Webhook portal',
    what: "A clinic's webhook endpoints and their delivery logs: add, test, retry, recover, with a webhooks:manage key.",
  },
  {
    href: '#events',
    name: 'Events catalog',
    what: 'What each webhook delivery and subscription event means.',
  },
  {
    href: ERROR_REFERENCE_PATH,
    name: 'Error reference',
    what: 'Every error code and when it is answered; each error body links to its row.',
  },
  {
    href: '/docs',
    name: 'Documentation',
    what: 'The guides: events and webhooks, test mode, the chat inbox, limits, decisions.',
  },
  {
    href: '/health',
    name: 'Health',
    what: '200 while the process lives; /ready also checks the database and migrations.',
  },
];

const places = PLACES.map(
  (p) => `<li><a href="${escapeHtml(p.href)}">${escapeHtml(p.name)}</a><p>${escapeHtml(p.what)}</p></li>`,
).join('\n');

const events = EVENT_TYPES.map((type) => {
  const scope = scopeToSee(type);
  return `<tr id="${escapeHtml(type)}"><td><code>${escapeHtml(type)}</code></td><td>${escapeHtml(eventCatalog[type])}</td><td class="scope">${scope ? `<code>${escapeHtml(scope)}</code>` : ''}</td></tr>`;
}).join('\n');

function landingHtml(origin: string, docs: Iterable<Document>): string {
  const calls = webhookCalls(origin, '-H "Authorization: Bearer $KEY"').join('\n');
  return renderPage({
    title: 'clinic-gateway',
    body: `<h1>clinic-gateway</h1>
<p class="lead">The integration API of the clinic-management product. Patients, appointments,
treatments, payments, calls and the chat inbox of dental and veterinary clinics, over REST under
<code>/v1</code> and GraphQL at <code>/graphql</code>. Changes leave as signed webhooks and live
GraphQL subscriptions.</p>
<ul class="links">
${places}
</ul>
<h2 id="start">First request</h2>
<p>Every call carries an API key of one clinic: <code>npm start</code> prints demo keys on its
first run, <code>npm run cli -- key create</code> makes more. Send it as a bearer token:</p>
<pre><code>GET /v1/patients?limit=3
Authorization: Bearer &lt;your API key&gt;</code></pre>
<p>A refusal says why: an <code>error</code> object with a stable <code>code</code>, a
<code>message</code>, the <code>request_id</code> to quote, and <code>doc_url</code>, the code's
entry in the <a href="${ERROR_REFERENCE_PATH}">error reference</a>.</p>
<h2 id="webhooks">A webhook in two calls</h2>
<p>Subscribe a receiver, then send it a test event. <code>$KEY</code> is a key with
<code>webhooks:manage</code> (the demo's clinic-writes key has it); a test clinic's receiver may be
plain http on your machine. The answer of the first call holds the secret the deliveries are signed
with, shown once, and the id the second call names (<code>wh_1</code> on a fresh demo). A sample
event carries <code>"test": true</code>; <code>npm run cli -- events trigger &lt;type&gt;</code> sends
one to every subscription of the clinic.</p>
<pre><code>${escapeHtml(calls)}</code></pre>
<h2 id="test-mode">Test and live clinics</h2>
<p>A clinic is a test clinic or a live one, for good, and its keys say which. The demo's clinics
are test clinics: <code>cg_test_</code> keys, the sandbox messaging network (receipts come back, a
simulated patient can answer), and webhook receivers or media over plain http and on loopback
addresses. Live clinics (<code>cg_live_</code> keys) reach public https URLs only, and the
sandbox's tools refuse them with
<a href="${ERROR_REFERENCE_PATH}#test_mode_only"><code>test_mode_only</code></a>. The details:
<a href="/docs/test-mode"><code>docs/test-mode.md</code></a>.</p>
<h2 id="events">Events</h2>
<p>Each change is recorded once as an event and delivered to webhook subscriptions
(<code>POST /v1/webhooks</code>, signed, retried for about a day), to GraphQL's
<code>events</code> subscription and to <code>GET /v1/events</code>. A key needs
<code>webhooks:manage</code> to see them, and the scope named below for that type.</p>
<table>
<thead><tr><th>Type</th><th>When</th><th>Also needs</th></tr></thead>
<tbody>
${events}
</tbody>
</table>
<h2 id="docs">Documentation</h2>
<ul class="links">
${documentLinks(docs)}
</ul>`,
  });
}

/**
 * The handler of `/`. Its calls name the address clients reach the service at: PUBLIC_URL when the
 * deployment sets it, else the one the browser asked for (its Host: what it shows is the page's
 * own address, pasted back by the same person; https behind a trusted proxy that says so).
 */
export function createLanding(opts: {
  documents: () => Promise<Map<string, Document>>;
  publicUrl?: string;
  trustProxy: TrustProxy;
}) {
  return async function serveLanding(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = opts.publicUrl ?? requestOrigin(req, opts.trustProxy);
    sendPage(req, res, landingHtml(origin, (await opts.documents()).values()));
  };
}

import { DateTime } from 'luxon';
import { DEMO_TIMEZONE } from '../demo/seed-demo.ts';
import { firstProviderWorkdays } from '../demo/seed-working-hours.ts';
import { webhookCalls } from './webhook-calls.ts';

interface DemoKeys {
  keys: Record<string, { key: string }>;
}

/**
 * The environment a CLI line needs to reach this service's database, as the service was started
 * with it: without them `npm run cli` would start (or find) another embedded PostgreSQL.
 */
function cliEnv(): string {
  const vars = ['DATA_DIR', 'EMBEDDED_PG_PORT']
    .filter((v) => process.env[v])
    .map((v) => {
      const value = process.env[v] as string;
      return `${v}=${/^[\w./:@-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`}`;
    });
  return vars.length ? `${vars.join(' ')} ` : '';
}

/** The next day (after today, at the demo clinics) on which the demo's first provider works: it has free slots. */
function nextWorkday(): string {
  let day = DateTime.now().setZone(DEMO_TIMEZONE).startOf('day').plus({ days: 1 });
  while (!firstProviderWorkdays.has(day.weekday)) day = day.plus({ days: 1 });
  return day.toISODate() as string;
}

/** What `npm start` prints: where the API is, and (on the first start only) the demo keys. */
export function printWelcome(url: string, demo: DemoKeys | null): void {
  const out: string[] = [];
  const cli = `${cliEnv()}npm run cli --`;
  out.push('', `clinic-gateway is listening on ${url}`);
  out.push(`  Start here          ${url}/   (every page, the event types, the error reference)`);
  out.push(`  GraphQL + GraphiQL  ${url}/graphql`);
  out.push(`  REST                ${url}/v1   (docs: ${url}/v1/docs, contract: ${url}/v1/openapi.json)`);
  out.push(`  Live chat inbox     ${url}/inbox   (in a browser, with a chat:read key; chat:write to reply)`);
  out.push(`  Webhook portal      ${url}/webhooks   (in a browser, with a webhooks:manage key)`);
  if (demo) {
    const read = demo.keys.readAll?.key;
    const write = demo.keys.chatWrite?.key;
    const vet = demo.keys.vetReadAll?.key;
    const clinic = demo.keys.clinicWrite?.key;
    out.push(
      '',
      'Demo data was seeded: two test clinics (cg_test_ keys, the sandbox network, webhooks and media',
      'on http:// and localhost allowed; docs/test-mode.md).',
      'These API keys are shown ONCE (only their hashes are stored):',
    );
    out.push(`  dental clinic, every read scope:  ${read}`);
    out.push(`  dental clinic, chat:write:        ${write}`);
    if (vet) out.push(`  veterinary clinic, read scopes:   ${vet}`);
    if (clinic)
      out.push(`  dental clinic, clinic writes:     ${clinic}   (every *:write but chat's, webhooks:manage)`);
    out.push('', 'Try:');
    out.push(`  curl -s -H "Authorization: Bearer ${read}" "${url}/v1/patients?limit=3"`);
    out.push(
      `  curl -s -H "Authorization: Bearer ${read}" "${url}/v1/patients?query=coh&response_format=detailed"`,
    );
    out.push(`  curl -s -H "Authorization: Bearer ${read}" "${url}/v1/catalog/treatments"`);
    if (vet)
      out.push(
        `  curl -s -H "Authorization: Bearer ${vet}" "${url}/v1/patients?include=owner,species&limit=2"`,
      );
    out.push(`  curl -s -H "Authorization: Bearer ${read}" "${url}/v1/chat/conversations?limit=3"`);
    out.push(
      `  curl -s -H "Authorization: Bearer ${write}" -H "content-type: application/json" ${url}/v1/chat/messages \\`,
      `    -d '{"to": "050-000-0993", "text": "Hello from the API"}'   # sandbox: delivered, read receipts off`,
    );
    out.push(
      `  ${cli} network inbound --clinic cln_1 --from 050-000-0993 --text "Hi!" --json   # the patient answers`,
    );
    out.push(
      `  curl -s -H "Authorization: Bearer ${read}" -H "content-type: application/json" ${url}/graphql \\`,
      `    -d '{"query":"{ patients(first: 3) { edges { node { id firstName lastName appointments(first: 2) { edges { node { start status { name } } } } } } } }"}'`,
    );
    if (clinic) {
      const day = nextWorkday();
      const next = DateTime.fromISO(day).plus({ days: 1 }).toISODate();
      const auth = `-H "Authorization: Bearer ${clinic}"`;
      out.push(
        `  curl -s ${auth} "${url}/v1/availability?appointment_type_id=apt_1&provider_id=prv_1&from=${day}&to=${next}"   # free slots on prv_1's next working day`,
        `  curl -s ${auth} -H "content-type: application/json" ${url}/v1/appointments \\`,
        `    -d '{"patient_id": "pat_1", "branch_id": "br_1", "provider_id": "prv_1", "type_id": "apt_1", "start": "<a start from the slots above>"}'`,
        `  ${cli} phone call --clinic cln_1 --from 050-000-0993 --answered --duration 95 --recording --transcript completed`,
        `  curl -s ${auth} "${url}/v1/events?limit=5"   # what those writes recorded, newest first`,
        ...webhookCalls(url, auth).map((line) => `  ${line}`),
        `  ${cli} events listen --key ${clinic} --url ${url} --forward-to http://localhost:4242/hooks   # live, signed as webhook deliveries`,
      );
    }
  } else {
    out.push(
      '',
      'Existing data kept: the demo keys printed on the first start still work (only their hashes are stored,',
      'so they cannot be shown again). To make a new one:',
    );
    out.push(`  ${cli} clinic list`);
    out.push(`  ${cli} key create --clinic cln_1 --scopes patients:read,catalog:read --name me`);
  }
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}

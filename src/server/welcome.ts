interface DemoKeys {
  keys: Record<string, { key: string }>;
}

/** What `npm start` prints: where the API is, and (on the first start only) the demo keys. */
export function printWelcome(url: string, demo: DemoKeys | null): void {
  const out: string[] = [];
  out.push('', `clinic-gateway is listening on ${url}`);
  out.push(`  GraphQL + GraphiQL  ${url}/graphql`);
  out.push(`  REST                ${url}/v1   (docs: ${url}/v1/docs, contract: ${url}/v1/openapi.json)`);
  if (demo) {
    const read = demo.keys.readAll?.key;
    const write = demo.keys.chatWrite?.key;
    const vet = demo.keys.vetReadAll?.key;
    out.push('', 'Demo data was seeded. These API keys are shown ONCE (only their hashes are stored):');
    out.push(`  dental clinic, every read scope:  ${read}`);
    out.push(`  dental clinic, chat:write:        ${write}`);
    if (vet) out.push(`  veterinary clinic, read scopes:   ${vet}`);
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
      '  npm run cli -- network inbound --clinic cln_1 --from 050-000-0993 --text "Hi!" --json   # the patient answers',
    );
    out.push(
      `  curl -s -H "Authorization: Bearer ${read}" -H "content-type: application/json" ${url}/graphql \\`,
      `    -d '{"query":"{ patients(first: 3) { edges { node { id first_name last_name appointments(first: 2) { edges { node { start status { name } } } } } } } }"}'`,
    );
  } else {
    out.push('', 'Existing data kept. Demo keys were printed on the first start; make a new one with:');
    out.push('  npm run cli -- clinic list');
    out.push('  npm run cli -- key create --clinic cln_1 --scopes patients:read,catalog:read --name me');
  }
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}

/**
 * GraphiQL's fetcher in the console at /graphql. It runs in the browser: src/server/graphiql.ts
 * serves it as a file after graphql-ws's browser build (the global `graphqlWs`).
 *
 * Yoga's own fetcher cannot carry the key to a subscription: over SSE (its default) this server
 * refuses subscriptions, and over graphql-ws it sends `connection_init` with an empty payload (the
 * Headers editor's values go into each operation's `extensions`, not into `connectionParams`), so
 * the server closes the socket with 4403 and graphql-ws retries it for about half a minute while
 * the response pane stays empty. Here queries and mutations are POSTed with the editor's headers,
 * and each subscription opens its own socket whose `connection_init` carries the editor's
 * Authorization, where the server reads the key (docs/events.md, Subscriptions).
 */
globalThis.graphiqlFetcher = (endpoint) => {
  const http = new URL(endpoint, location.href);
  const ws = new URL(http);
  ws.protocol = http.protocol === 'https:' ? 'wss:' : 'ws:';
  return (params, opts) => {
    const headers = opts?.headers ?? {};
    return operationType(params.query, params.operationName) === 'subscription'
      ? subscribe(ws.href, params, headers)
      : post(http.href, params, headers);
  };
};

/** A failure shown as the server shows one, in a GraphQL response's `errors`. */
const failure = (message, code) => ({ errors: [{ message, ...(code ? { extensions: { code } } : {}) }] });

/**
 * The type of the operation `name` (or the only one) of a document, read from its text: the
 * `documentAST` GraphiQL hands over can lag behind the editor (a query typed and run at once came
 * with the previous document's), and no GraphQL parser is in the page. Comments and strings are
 * blanked out; at the top level (outside braces and parentheses) a definition starts with its
 * keyword and name (a `{` without them is the query shorthand) and ends when its selection set
 * closes.
 */
function operationType(query, name) {
  const text = String(query ?? '').replace(/"""[\s\S]*?"""|"(?:\\.|[^"\\\n])*"|#[^\n\r]*/g, ' ');
  const definitions = [];
  let current = null;
  let depth = 0;
  let directive = false;
  for (const [token] of text.matchAll(/[{}()@]|[_A-Za-z][_0-9A-Za-z]*/g)) {
    if (token === '{' || token === '(') {
      if (depth === 0 && !current) {
        current = { type: 'query', name: null };
        definitions.push(current);
      }
      depth++;
    } else if (token === '}' || token === ')') {
      depth = Math.max(0, depth - 1);
      // A definition ends with its selection set; variables and directive arguments do not end it.
      if (token === '}' && depth === 0) current = null;
    } else if (depth > 0) continue;
    else if (token === '@') directive = true;
    else if (directive) directive = false;
    else if (!current) {
      current = { type: token, name: null };
      definitions.push(current);
    } else if (current.name === null) current.name = token;
  }
  const operations = definitions.filter((d) => d.type !== 'fragment');
  const operation = name
    ? operations.find((o) => o.name === name)
    : operations.length === 1
      ? operations[0]
      : null;
  return operation?.type;
}

async function post(url, params, headers) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      accept: 'application/graphql-response+json, application/json',
      'content-type': 'application/json',
      ...headers,
    },
    body: JSON.stringify(params),
  });
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return failure(`HTTP ${response.status}, not a GraphQL response: ${text.slice(0, 300)}`);
  }
}

function subscribe(url, params, headers) {
  const authorization = Object.entries(headers).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
  // Answered at once, not as a subscription: GraphiQL then shows it as a finished run, whose
  // button runs again rather than stopping.
  if (!authorization)
    return Promise.resolve(
      failure(
        'Subscriptions need your API key. Put it in Headers, below the query (the commented example ' +
          'there shows how), and run again: the key goes in connection_init (docs/events.md).',
        'unauthenticated',
      ),
    );
  return {
    subscribe(sink) {
      const client = graphqlWs.createClient({
        url,
        connectionParams: { Authorization: authorization },
        // graphql-ws retries a refused key (4403) and a lost socket for about half a minute with
        // nothing shown: the console says what happened at once, and the user runs again.
        retryAttempts: 0,
      });
      const stop = client.subscribe(params, {
        next: (result) => sink.next(result),
        error: (e) => {
          sink.next(explain(e, url));
          sink.complete();
          client.dispose();
        },
        complete: () => {
          sink.complete();
          client.dispose();
        },
      });
      return {
        unsubscribe() {
          stop();
          client.dispose();
        },
      };
    },
  };
}

/** What graphql-ws reports: the server's errors for the operation, a close, or a socket error. */
function explain(e, url) {
  if (Array.isArray(e)) return { errors: e };
  if (typeof e?.code === 'number') {
    // The server's reason is REST's code and message for the same refusal (`unauthenticated:
    // Invalid or revoked API key.`, src/server/close-reason.ts), at connect or when a running
    // subscription's key is revoked or narrowed.
    const said = e.code === 4403 && /^(unauthenticated|forbidden|rate_limited): (.+)$/s.exec(e.reason ?? '');
    if (said)
      return failure(
        `The server refused the API key in Headers: ${said[2]} (close 4403, ${said[1]})`,
        said[1],
      );
    if (e.code === 4403 && (!e.reason || e.reason === 'Forbidden'))
      return failure(
        'The server refused the API key in Headers (close 4403 Forbidden): it is malformed, unknown ' +
          'or revoked, or this address sent too many bad keys (docs/events.md).',
        'unauthenticated',
      );
    const reason = e.reason ? ` ${e.reason}` : '';
    return failure(`The server closed the subscription's connection: ${e.code}${reason} (docs/limits.md).`);
  }
  return failure(`Could not open a websocket to ${url}.`);
}

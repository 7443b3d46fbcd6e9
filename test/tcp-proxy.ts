import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that a test can break: `cut()` refuses new connections and
 * drops the open ones (a database that is down), `freeze()` keeps connections open but passes
 * nothing (a database that stopped answering), `restore()` heals both.
 */
export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string;
  cut(): void;
  freeze(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let state: 'open' | 'cut' | 'frozen' = 'open';
  const pairs = new Set<[net.Socket, net.Socket]>();
  const held: net.Socket[] = [];

  function connect(client: net.Socket) {
    const upstream = net.connect(target.port, target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
    if (state === 'frozen') pause(pair);
  }
  const pause = ([a, b]: [net.Socket, net.Socket]) => {
    a.unpipe(b);
    b.unpipe(a);
    a.pause();
    b.pause();
  };

  const server = net.createServer((client) => {
    if (state === 'cut') return client.destroy();
    if (state === 'frozen') {
      held.push(client); // accepted, never answered
      return;
    }
    connect(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  const proxy: TcpProxy = {
    port,
    through(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut() {
      state = 'cut';
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
    },
    freeze() {
      state = 'frozen';
      for (const pair of pairs) pause(pair);
    },
    restore() {
      state = 'open';
      for (const [a, b] of pairs) {
        a.pipe(b);
        b.pipe(a);
        a.resume();
        b.resume();
      }
      for (const client of held.splice(0)) client.destroy();
    },
    async close() {
      proxy.cut();
      for (const client of held.splice(0)) client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}

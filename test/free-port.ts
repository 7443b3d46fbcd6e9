import net from 'node:net';

/**
 * A loopback port the OS has just found free. A random pick from a range can land on a port a
 * test's own outgoing connections hold (Linux hands those out from 32768 to 60999).
 */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer().once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });

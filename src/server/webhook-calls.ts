/**
 * Subscribing a receiver and sending it a test event: the two calls a webhook integration starts
 * with, as the start banner (welcome.ts) and the landing page print them. The receiver is plain
 * http on this machine, which a test clinic (the demo's) may use (docs/test-mode.md). A fresh
 * demo has no subscription, so the first one made is wh_1.
 */
export function webhookCalls(url: string, auth: string): string[] {
  return [
    `curl -s ${auth} -H "content-type: application/json" ${url}/v1/webhooks \\`,
    `  -d '{"url": "http://localhost:4242/hooks", "event_types": ["appointment.created"]}'   # subscribe a receiver; keep the secret it answers`,
    `curl -s ${auth} -H "content-type: application/json" ${url}/v1/webhooks/wh_1/test -d '{}'   # a sample appointment.created ("test": true) to wh_1, signed with that secret`,
  ];
}

/** What the portal holds: the endpoints read, the open one's delivery log, the catalog. */

export const state = {
  key: '',
  /** wh id → endpoint, with `latest`: its newest attempt (or null) */
  endpoints: new Map(),
  /** More endpoints than the list reads. */
  moreEndpoints: false,
  /** [{ type, description }] from the EventType enum, read once */
  catalog: null,
  /** What the address names: { view: 'list' | 'new' | 'endpoint' | 'edit' | 'catalog', id? } */
  route: { view: 'list' },
  /** delivery id → attempt, of the open endpoint */
  deliveries: new Map(),
  deliveriesCursor: null,
  /** Attempts shown once already: a later one is marked new. */
  seen: new Set(),
  /** A secret shown once (creation, rotation): { id, secret }, until the person is done. */
  revealed: null,
  /** The creation being sent: the same input sent again keeps its idempotency key. */
  pendingCreate: null,
  /** The key was taken once: polling goes on; a later refusal stops it. */
  started: false,
  /** Stops the portal when `error` refuses the key (portal.js sets it); true then. */
  onRefused: (_error) => false,
};

const byTime = (a, b) =>
  (b.attemptedAt ?? '').localeCompare(a.attemptedAt ?? '') || idNumber(b.id) - idNumber(a.id);
export const idNumber = (id) => Number(String(id).replace(/^\D+/, '')) || 0;

/** The open endpoint's attempts, newest first. */
export const sortedDeliveries = () => [...state.deliveries.values()].sort(byTime);

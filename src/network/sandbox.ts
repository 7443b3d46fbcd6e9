import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../lib/clock.ts';
import { AppError, isErrorCode } from '../lib/errors.ts';
import { logger } from '../lib/logger.ts';
import { signBody } from '../lib/signing.ts';
import {
  type Accepted,
  type MessagingNetwork,
  type NetworkCallback,
  type NetworkTemplate,
  type OutboundMessage,
  SIGNATURE_HEADER,
} from './adapter.ts';
import { ReferenceMemory, type ReferenceMemoryOptions } from './reference-memory.ts';
import type { DueReceipt, ReceiptSchedule, ReceiptStep } from './sandbox-receipts.ts';
import { SANDBOX_TEMPLATES } from './sandbox-templates.ts';

/**
 * The sandbox messaging network, the default driver. It behaves like the real one: it accepts a
 * send, then calls the service's callback endpoint over HTTP, signed with the network secret,
 * with sent, delivered and read receipts after delays. Like a real network's, its pending
 * receipts outlive the service: it takes a send only once they are kept as jobs on the job queue
 * (sandbox-receipts.ts), and any process running the sandbox posts them when they come due, a
 * process started after a kill included. Test numbers (docs/chat.md) change that:
 * any number whose last nine digits are
 * - 500000991 is rejected (a failed receipt with a reason, instead of sent),
 * - 500000992 is never delivered (sent only),
 * - 500000993 has read receipts off (sent and delivered, never read).
 * Like a network with client references, a send whose `reference` it has seen (within the last
 * hour, reference-memory.ts) is answered with the first network id and not sent again; a receipt
 * the service answers 503 is posted again. The references it remembers are this process's: the
 * service and `npm run worker` each have their own sandbox, and do not share them.
 * It also plays the patient's side (inbound messages, reactions) for the CLI, the sandbox-only
 * GraphQL mutations and the tests.
 */
export const TEST_NUMBERS = {
  rejected: '500000991',
  neverDelivered: '500000992',
  noReadReceipts: '500000993',
} as const;

export const REJECTION_REASON = 'The number is not registered on the messaging network.';

export interface SandboxOptions {
  /** Where the service takes callbacks (known once the server listens). */
  callbackUrl: () => string;
  secret: string;
  clock: Clock;
  /** Receipt delays in ms after a send. */
  delays?: { sent: number; delivered: number; read: number };
  /** Where the receipts wait for their times: the job queue (QueuedReceipts). */
  receipts: ReceiptSchedule;
  /** How long and how many client references are remembered (REFERENCE_MEMORY_DEFAULTS). */
  references?: Partial<ReferenceMemoryOptions>;
}

export const DEFAULT_DELAYS = { sent: 500, delivered: 1500, read: 3000 };
/** How often a receipt answered 503 is posted again at once (after 50, 100, 200 … ms), before its job is retried. */
const RECEIPT_RETRIES = 6;
/** How long the network tries to fetch a message's media before it fails the message. */
const MEDIA_FETCH_MS = 10_000;
/** How long a callback waits for the service's answer. */
const CALLBACK_MS = 10_000;
/** The most sends and reactions `sent` and `reactions` keep, the oldest dropped first. */
export const KEPT_FOR_TESTS = 10_000;

export class SandboxNetwork implements MessagingNetwork {
  readonly kind = 'sandbox';
  readonly delays: { sent: number; delivered: number; read: number };
  readonly #opts: SandboxOptions;
  /** Aborted by close(): a process stopping posts nothing more, and its receipts wait for the next one. */
  readonly #closing = new AbortController();
  /** What the sandbox was asked to send and react, newest last (tests read it; the last KEPT_FOR_TESTS). */
  readonly sent: (OutboundMessage & { networkMessageId: string })[] = [];
  readonly reactions: { networkMessageId: string; emoji: string | null }[] = [];
  /** Network ids by the service's reference: a repeated attempt is answered, not sent again. */
  readonly #byReference: ReferenceMemory;

  constructor(opts: SandboxOptions) {
    this.#opts = opts;
    this.delays = opts.delays ?? DEFAULT_DELAYS;
    this.#byReference = new ReferenceMemory(opts.references);
  }

  /** How many client references it remembers now. */
  get rememberedReferences(): number {
    return this.#byReference.size;
  }

  async send(message: OutboundMessage): Promise<Accepted> {
    const known = message.reference && this.#byReference.get(message.reference);
    if (known) return { networkMessageId: known };
    const networkMessageId = `sbx_${randomBytes(12).toString('hex')}`;
    // Taken only once its receipts are kept: a send that fails here is tried again as a new one.
    await this.#opts.receipts.schedule({
      networkMessageId,
      clinicPhone: message.from,
      steps: this.#receiptsOf(message),
    });
    if (message.reference) this.#byReference.set(message.reference, networkMessageId);
    keepLast(this.sent, { ...message, networkMessageId });
    return { networkMessageId };
  }

  /** The receipts a send gets, in order, by the number it goes to. */
  #receiptsOf(message: OutboundMessage): ReceiptStep[] {
    const last9 = message.to.replace(/\D/g, '').slice(-9);
    const { sent, delivered, read } = this.delays;
    const step = (status: ReceiptStep['status'], afterMs: number, failureReason: string | null = null) => ({
      status,
      failureReason,
      afterMs,
    });
    if (last9 === TEST_NUMBERS.rejected) return [step('failed', sent, REJECTION_REASON)];
    // Like a real network, it fetches the media from the link it was given when it sends.
    const steps: ReceiptStep[] = [
      message.kind === 'media' ? { ...step('sent', sent), mediaUrl: message.mediaUrl } : step('sent', sent),
    ];
    if (last9 === TEST_NUMBERS.neverDelivered) return steps;
    steps.push(step('delivered', delivered));
    if (last9 !== TEST_NUMBERS.noReadReceipts) steps.push(step('read', read));
    return steps;
  }

  /**
   * Posts a receipt come due (the receipts' worker calls it, sandbox-receipts.ts), dated now by
   * the sandbox's clock. Throws for it to be posted again later: the service unreachable, or a 5xx
   * (a 503 is first posted again at once, a few times). A receipt the service refuses (4xx) is
   * not posted again, as a real network does not.
   */
  async postReceipt(r: DueReceipt): Promise<void> {
    let { status, failureReason } = r;
    if (r.mediaUrl) {
      const ok = await fetch(r.mediaUrl, { signal: AbortSignal.timeout(MEDIA_FETCH_MS) }).then(
        async (res) => {
          await res.body?.cancel();
          return res.ok;
        },
        () => false,
      );
      if (!ok) [status, failureReason] = ['failed', 'The media could not be fetched.'];
    }
    try {
      await this.#callbackRetrying({
        type: 'receipt',
        network_message_id: r.networkMessageId,
        clinic_phone: r.clinicPhone,
        status,
        failure_reason: failureReason,
        at: this.#opts.clock.now().toISOString(),
      });
    } catch (e) {
      if (!(e instanceof CallbackRefused)) throw e;
      logger.warn(
        { networkMessageId: r.networkMessageId, status, err: e.message },
        'sandbox receipt refused',
      );
    }
  }

  async react(reaction: { networkMessageId: string; emoji: string | null }): Promise<void> {
    keepLast(this.reactions, { networkMessageId: reaction.networkMessageId, emoji: reaction.emoji });
  }

  async templates(_clinicPhone: string): Promise<NetworkTemplate[]> {
    return SANDBOX_TEMPLATES.map(({ role: _role, ...t }) => t);
  }

  /** The patient writes to the clinic: the callback the real network would make. */
  inbound(m: PatientMessage): Promise<unknown> {
    return this.callback(inboundEvent(m, this.#opts.clock.now()));
  }

  /** The patient reacts to a message (null withdraws the reaction). */
  patientReaction(r: { clinicPhone: string; from: string; networkMessageId: string; emoji: string | null }) {
    return this.callback({
      type: 'reaction',
      network_message_id: r.networkMessageId,
      clinic_phone: r.clinicPhone,
      from: r.from,
      emoji: r.emoji,
      at: this.#opts.clock.now().toISOString(),
    });
  }

  /** Posts a callback, signed, as the network does; answers the service's reply. */
  async callback(event: NetworkCallback): Promise<unknown> {
    const body = JSON.stringify(event);
    const res = await fetch(this.#opts.callbackUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(this.#opts.secret, body) },
      body,
      signal: AbortSignal.any([this.#closing.signal, AbortSignal.timeout(CALLBACK_MS)]),
    });
    const reply = await res.json().catch(() => null);
    // The service refused what the patient side sent (sandbox mutations, the CLI): its own 4xx.
    const error = reply?.error;
    if (res.status < 500 && !res.ok && isErrorCode(error?.code))
      throw new AppError(error.code, error.message, error.param ? { param: error.param } : {});
    if (!res.ok) {
      const message = `callback answered ${res.status}: ${JSON.stringify(reply)}`;
      throw res.status < 500 ? new CallbackRefused(message) : new Error(message);
    }
    return reply;
  }

  /**
   * A receipt, posted again while the service answers 503 (it may not have saved the message's
   * network id yet), as a real network retries a callback: a few times, backing off.
   */
  async #callbackRetrying(event: NetworkCallback): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.callback(event);
      } catch (e) {
        if (e instanceof AppError) throw new CallbackRefused(e.message);
        if (attempt >= RECEIPT_RETRIES || !/answered 503/.test((e as Error).message)) throw e;
        // Cut short when the sandbox closes: the job is retried by the next process.
        await delay(50 * 2 ** attempt, undefined, { signal: this.#closing.signal });
      }
    }
  }

  /** Waits until every receipt scheduled so far has been posted, by any process (tests). */
  settle(): Promise<void> {
    return this.#opts.receipts.settle();
  }

  /** Stops this process's part in posting receipts; they stay kept, for the next start. */
  close(): void {
    this.#closing.abort(new Error('the sandbox network is closing'));
    this.#opts.receipts.close();
  }
}

/** The service answered a callback with a 4xx: posting it again would change nothing. */
class CallbackRefused extends Error {}

/** A message from the patient's side (the sandbox, the CLI's `network inbound`). */
export interface PatientMessage {
  clinicPhone: string;
  from: string;
  text: string | null;
  profileName?: string | null;
  media?: { url: string; type: 'image' | 'document' | 'audio' | 'video' | 'sticker'; mime: string } | null;
  replyToNetworkMessageId?: string | null;
}

/** The type a network gives each kind of media when the file says nothing better. */
export const MEDIA_MIMES = {
  image: 'image/jpeg',
  document: 'application/pdf',
  audio: 'audio/ogg',
  video: 'video/mp4',
  sticker: 'image/webp',
} as const;

/** The inbound callback the network makes for a patient's message. */
export function inboundEvent(m: PatientMessage, now: Date): NetworkCallback {
  return {
    type: 'message.inbound',
    network_message_id: `sbx_in_${randomBytes(12).toString('hex')}`,
    clinic_phone: m.clinicPhone,
    from: m.from,
    profile_name: m.profileName ?? null,
    message_type: m.media?.type ?? 'text',
    text: m.text,
    media: m.media ? { url: m.media.url, mime_type: m.media.mime } : null,
    contacts: null,
    reply_to_network_message_id: m.replyToNetworkMessageId ?? null,
    at: now.toISOString(),
  };
}

function keepLast<T>(list: T[], item: T) {
  list.push(item);
  if (list.length > KEPT_FOR_TESTS) list.splice(0, list.length - KEPT_FOR_TESTS);
}

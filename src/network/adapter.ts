/**
 * The messaging network as the service sees it (issue 9; DESIGN.md, src/network): what the service
 * asks of it, and what it calls back with at the one signed endpoint (`POST /hooks/network`, its
 * body signed with src/lib/signing.ts under the network's secret). A real network and the sandbox
 * driver implement the same interface and send the same callbacks over HTTP.
 *
 * Phones are international (E.164, `+972…`) on this side; the services turn them into the spec's
 * forms. Ids the network gives messages are its own (`network_message_id`), never ours.
 */

/** The one endpoint the messaging network calls back (a real network and the sandbox alike). */
export const CALLBACK_PATH = '/hooks/network';
/** The header of its signature (src/lib/signing.ts), as on webhook deliveries. */
export const SIGNATURE_HEADER = 'x-service-signature';

/** A message the clinic sends. Media goes out as the clinic's image or document template. */
export type OutboundMessage = (
  | { kind: 'text'; from: string; to: string; text: string }
  | {
      kind: 'template';
      from: string;
      to: string;
      template: string;
      language: string | null;
      params: string[];
    }
  | {
      kind: 'media';
      from: string;
      to: string;
      template: string;
      mediaType: 'image' | 'document';
      /** Where the network fetches the bytes: a signed link to the service's own copy. */
      mediaUrl: string;
      filename: string | null;
    }
) & {
  /**
   * The service's own id of the message (`out_N`), the same on every attempt to send it: a
   * network that deduplicates on a client reference (the sandbox does) takes a repeated attempt
   * as the first one, so a send whose answer was lost never reaches the patient twice.
   */
  reference?: string;
};

/**
 * The network refused the message for good (a number or template it will never take): sending
 * it again cannot help, so the message fails at once. Anything else `send` throws (the network
 * unreachable, a timeout, its 5xx or 429) is taken as transient and the send is tried again
 * (docs/chat.md, Sending).
 */
export class NetworkRefusal extends Error {
  override name = 'NetworkRefusal';
}

/** The network took the message; receipts follow through the callback. */
export interface Accepted {
  networkMessageId: string;
}

/** A template as the network holds it for a clinic's phone number. */
export interface NetworkTemplate {
  name: string;
  display_name: string | null;
  language: string | null;
  model_type: string | null;
  category: string | null;
  status: string | null;
  rejection_reason: string | null;
  parameter_count: number | null;
  body: string | null;
  header: unknown;
  footer: unknown;
  buttons: unknown;
  /** False when its approved version was withdrawn (listed, not sendable); absent means true. */
  has_active_version?: boolean;
}

export interface MessagingNetwork {
  /**
   * Hands a message to the network: its id there once accepted. Throws `NetworkRefusal` when the
   * network refuses it for good, any other error when it could not take it now. `signal` aborts
   * when the sender stops waiting (the request to the network should end with it).
   */
  send(message: OutboundMessage, signal?: AbortSignal): Promise<Accepted>;
  /** Sets (or, with null, withdraws) the clinic's reaction to a message. */
  react(reaction: {
    from: string;
    to: string;
    networkMessageId: string;
    emoji: string | null;
  }): Promise<void>;
  /** The templates of a clinic's phone number. */
  templates(clinicPhone: string): Promise<NetworkTemplate[]>;
}

/** Message types of the spec (Message.type). */
export type MessageType = 'text' | 'image' | 'document' | 'audio' | 'video' | 'sticker' | 'contacts';

/** What the network posts to the callback endpoint, one event per request. */
export type NetworkCallback =
  | {
      /** A patient wrote (opens the 24-hour window). */
      type: 'message.inbound';
      network_message_id: string;
      clinic_phone: string;
      from: string;
      profile_name: string | null;
      message_type: MessageType;
      text: string | null;
      /** Fetched once by the service into its own store. */
      media: { url: string; mime_type: string } | null;
      contacts: unknown[] | null;
      reply_to_network_message_id: string | null;
      at: string;
    }
  | {
      /** Staff wrote from the clinic's own phone: an outbound message, status sent. */
      type: 'message.echo';
      network_message_id: string;
      clinic_phone: string;
      to: string;
      message_type: MessageType;
      text: string | null;
      media: { url: string; mime_type: string } | null;
      at: string;
    }
  | {
      type: 'reaction';
      network_message_id: string;
      clinic_phone: string;
      from: string;
      /** null: the patient withdrew it. */
      emoji: string | null;
      at: string;
    }
  | {
      /** A delivery receipt; may arrive twice or out of order. */
      type: 'receipt';
      network_message_id: string;
      /** The clinic's number the message went out from. */
      clinic_phone: string;
      status: 'sent' | 'delivered' | 'read' | 'failed';
      failure_reason: string | null;
      at: string;
    };

import type { MessagingNetwork } from '../../network/adapter.ts';

/** What the chat services talk to: the messaging network (the sandbox by default). */
export interface ChatDeps {
  network: MessagingNetwork;
}

declare module '../../lib/request-context.ts' {
  interface AppServices {
    chat: ChatDeps;
  }
}

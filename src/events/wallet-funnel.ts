// The wallet funnel: the TON Connect steps of a session, in order, from connecting a wallet to a signed transaction.

export const FUNNEL = [
  'connection-started',
  'connection-completed',
  'transaction-sent-for-signature',
  'transaction-signed',
] as const;

export type FunnelStep = (typeof FUNNEL)[number];

/** a user completing a TON Connect connection */
export const WALLET_CONNECTION_EVENT: FunnelStep = FUNNEL[1];
/** a transaction the user signed in their wallet */
export const SIGNED_TRANSACTION_EVENT: FunnelStep = FUNNEL[3];

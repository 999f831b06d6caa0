// Who made a read key, server key or public link: stored as the maker's keyed hash, shown as their name and reference.
import type { PrismaClient } from '../db/store.ts';
import type { Secrets } from './secret.ts';
import type { Actor, AppRecord, TokenRegistry } from './registry.ts';

/** what created_by holds for what the operator CLI makes (a keyed hash is 22 characters, never this word) */
export const OPERATOR_MAKER = 'operator';
/** characters of a member's reference: enough to tell an app's members apart, never their id */
const REFERENCE_LENGTH = 12;

/** a maker as lists show them */
export interface Maker {
  /** the member's reference in this app; null for the operator and unknown makers */
  ref: string | null;
  /** the Telegram first name they gave; null when unknown */
  name: string | null;
  /** what they are to the app now: "former" for someone not in the team (gone, or an administrator) */
  role: 'owner' | 'editor' | 'viewer' | 'former' | 'operator' | 'unknown';
}

/** what created_by stores for the actor: their keyed hash, or OPERATOR_MAKER for the operator CLI */
export function makerKeyOf(registry: TokenRegistry, actor: Actor): string {
  return actor.telegramId === undefined ? OPERATOR_MAKER : registry.ownerKey(actor.telegramId);
}

/** a member's reference in an app: what lists show and removal and transfer take */
export function memberReference(secrets: Secrets, appId: number, memberKey: string): string {
  return secrets.shortHash('member-reference', `${appId}:${memberKey}`).slice(0, REFERENCE_LENGTH);
}

/** "Alice (editor, Ab3dE…)", "the operator", "unknown" */
export function makerText(maker: Maker): string {
  if (maker.role === 'operator') return 'the operator';
  if (maker.role === 'unknown') return 'unknown';
  const what = maker.role === 'former' ? 'not in the team' : maker.role;
  return `${maker.name ?? maker.ref} (${what}${maker.name ? `, ${maker.ref}` : ''})`;
}

/** a maker as the site's API and the CLI's JSON list them */
export function makerDocument(maker: Maker) {
  return { ref: maker.ref, name: maker.name, role: maker.role };
}

export class Makers {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly secrets: Secrets,
  ) {}

  /** tells who each stored maker key is in the app, reading the team once */
  async describer(app: Pick<AppRecord, 'appId' | 'ownerKey'>): Promise<(key: string | null) => Maker> {
    const [rows, owner] = await Promise.all([
      this.prisma.appMember.findMany({
        where: { appId: app.appId },
        select: { memberKey: true, role: true, name: true },
      }),
      this.prisma.app.findUnique({ where: { id: app.appId }, select: { ownerName: true } }),
    ]);
    const team = new Map(rows.map((row) => [row.memberKey, row]));
    return (key) => {
      if (key === null) return { ref: null, name: null, role: 'unknown' };
      if (key === OPERATOR_MAKER) return { ref: null, name: null, role: 'operator' };
      const ref = memberReference(this.secrets, app.appId, key);
      if (key === app.ownerKey) return { ref, name: owner?.ownerName ?? null, role: 'owner' };
      const member = team.get(key);
      if (!member) return { ref, name: null, role: 'former' };
      return { ref, name: member.name, role: member.role === 'editor' ? 'editor' : 'viewer' };
    };
  }
}

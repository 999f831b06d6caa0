// The funnels an owner saves for an app, next to the wallet funnel every app has. Saving under a name that exists
// replaces that funnel (editing it); at most MAX_SAVED_FUNNELS per app. Callers check who may touch the app.
import type { PrismaClient } from '../../db/prisma-client/index.js';
import { DEFAULT_WINDOW, parseFunnelQuery } from './funnel-parameters.ts';
import { MAX_FUNNEL_STEPS } from './insights.ts';

export const MAX_SAVED_FUNNELS = 20;
const MAX_NAME_LENGTH = 64;

export interface SavedFunnel {
  /** null for the default funnel, which cannot be changed or deleted */
  id: number | null;
  name: string;
  steps: string[];
  by: 'user' | 'session';
  window: string;
}

/** what every app shows first: launch, then a wallet connection started and completed */
export const DEFAULT_FUNNEL: SavedFunnel = {
  id: null,
  name: 'Wallet connection',
  steps: ['app-init', 'connection-started', 'connection-completed'],
  by: 'user',
  window: DEFAULT_WINDOW,
};

export type SaveResult = { ok: true; funnel: SavedFunnel } | { ok: false; error: string; field: string };

export class SavedFunnels {
  constructor(private readonly prisma: PrismaClient) {}

  /** the default funnel, then the saved ones by name */
  async list(appId: number): Promise<SavedFunnel[]> {
    const rows = await this.prisma.savedFunnel.findMany({ where: { appId }, orderBy: { name: 'asc' } });
    return [DEFAULT_FUNNEL, ...rows.map(toFunnel)];
  }

  async save(appId: number, input: { name?: unknown; steps?: unknown; by?: unknown; window?: unknown }) {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name.includes('\u0000')) return refused("A funnel's name must not contain a NUL character.", 'name');
    if (name === '' || name.length > MAX_NAME_LENGTH)
      return refused(`A funnel needs a name of 1 to ${MAX_NAME_LENGTH} characters.`, 'name');
    if (name === DEFAULT_FUNNEL.name) return refused(`"${name}" is the default funnel; choose another name.`, 'name');
    const steps = Array.isArray(input.steps) ? input.steps.join(',') : String(input.steps ?? '');
    const parsed = parseFunnelQuery(
      { steps, by: optionalText(input.by), window: optionalText(input.window) },
      MAX_FUNNEL_STEPS,
      'field',
    );
    if (!parsed.ok) return refused(parsed.error, parsed.parameter);
    const window = optionalText(input.window) ?? DEFAULT_WINDOW;
    const data = { steps: parsed.value.steps, by: parsed.value.by, window };
    return this.prisma.$transaction(async (tx) => {
      const existing = await tx.savedFunnel.findUnique({ where: { appId_name: { appId, name } } });
      if (!existing && (await tx.savedFunnel.count({ where: { appId } })) >= MAX_SAVED_FUNNELS)
        return refused(`An app keeps at most ${MAX_SAVED_FUNNELS} funnels; delete one first.`, 'name');
      const row = await tx.savedFunnel.upsert({
        where: { appId_name: { appId, name } },
        create: { appId, name, ...data },
        update: data,
      });
      return { ok: true as const, funnel: toFunnel(row) };
    });
  }

  /** false when the app has no such funnel */
  async delete(appId: number, id: number): Promise<boolean> {
    return (await this.prisma.savedFunnel.deleteMany({ where: { appId, id } })).count > 0;
  }
}

function refused(error: string, field: string): SaveResult {
  return { ok: false, error, field };
}

const optionalText = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

function toFunnel(row: { id: number; name: string; steps: string[]; by: string; window: string }): SavedFunnel {
  return {
    id: row.id,
    name: row.name,
    steps: row.steps,
    by: row.by === 'session' ? 'session' : 'user',
    window: row.window,
  };
}

// What every route of the site API reads from its request: the signed-in user and the app the path names (set by
// the API's preHandler), refusals of what was typed, and the dashboard's period and filter.
import type { FastifyRequest } from 'fastify';
import { type Filter, type FilterQuery, parseFilter } from '../../events/read/filters.ts';
import { lastDays, type Period } from '../../events/read/dashboard.ts';
import { refused } from '../../platform/http-error.ts';
import type { Parsed } from '../../platform/parsed.ts';
import type { Permission } from '../../tokens/policy.ts';
import type { Actor, AppRecord } from '../../tokens/registry.ts';
import { appNameParams, fields, text, validated } from '../schemas.ts';
import { actorOf, type SiteUser } from '../session.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** the signed-in user, once the API's preHandler found them */
    siteUser: SiteUser | null;
    /** the app the path names, when the route's permission allowed the signed-in user */
    siteApp: AppRecord | null;
  }
  interface FastifyContextConfig {
    /** what the signed-in user must be allowed on the app the path names, checked before the handler */
    permission?: Permission;
    /**
     * the answer shows what an app sent a moment ago (its last events, whether the first arrived): the read waits for
     * the loader (a few seconds at most), after the sign-in check; the others read what the store holds
     */
    fresh?: boolean;
  }
}

export function userOf(request: FastifyRequest): SiteUser {
  if (!request.siteUser) throw new Error('a site API route ran without its signed-in user');
  return request.siteUser;
}

export const actorOfRequest = (request: FastifyRequest): Actor => actorOf(userOf(request));

/** the app in the path; only routes that declare a permission have one */
export function appOf(request: FastifyRequest): AppRecord {
  if (!request.siteApp) throw new Error('a site API route without a permission asked for its app');
  return request.siteApp;
}

/** the value, or a 400 naming the field */
export function accepted<T>(parsed: Parsed<T>, field: string): T {
  if (!parsed.ok) throw refused(400, parsed.error, field);
  return parsed.value;
}

export function periodOf(query: { days?: string }): Period {
  const days = Number(query.days ?? 30);
  if (![7, 30, 90].includes(days)) throw refused(400, 'days must be 7, 30 or 90', 'days');
  return lastDays(days);
}

export function filterOf(query: FilterQuery): Filter {
  return accepted(parseFilter(query), 'filter');
}

/** the dashboard's query: the period in days and the filter */
export type ViewQuery = FilterQuery & { days?: string };
export type NamedApp = { Params: { name: string } };

export const VIEW = {
  days: text(8),
  platform: text(64),
  language: text(64),
  premium: text(8),
  campaign: text(64),
  verified: text(8),
};
export const nameOnly = validated({ params: appNameParams });
export const nameAndView = validated({ params: appNameParams, querystring: fields(VIEW) });

/** the schema of path parameters: the app's name, and the named ones beside it with their own schemas */
export function nameAnd(names: Record<string, object>) {
  return {
    ...appNameParams,
    required: ['name', ...Object.keys(names)],
    properties: { ...appNameParams.properties, ...names },
  };
}

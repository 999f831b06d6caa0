// An app's team under /api/apps/:name: the owner and members with their roles, invites as bot deep links (owner),
// removing a member (the owner; a member removes themselves, "me", to leave) and handing the app over (owner).
import type { FastifyPluginAsync } from 'fastify';
import { refused } from '../../platform/http-error.ts';
import { inviteLink, isMemberRole, memberDocument } from '../../tokens/members.ts';
import type { SiteContext } from '../context.ts';
import { text, validated } from '../schemas.ts';
import { appDocuments } from './app-documents.ts';
import { actorOfRequest, nameAnd, type NamedApp, nameOnly } from './requests.ts';

export const teamRoutes: FastifyPluginAsync<{ site: SiteContext }> = async (api, { site }) => {
  const { members } = site.services;
  const documents = appDocuments(site.services);

  api.get<NamedApp>('/members', nameOnly, async (request) => {
    const { app: record, members: listed } = await members.list(request.params.name, actorOfRequest(request));
    return { app_name: record.appName, role: record.role, members: listed.map(memberDocument) };
  });

  api.post<NamedApp & { Body: { role?: unknown } }>('/invites', nameOnly, async (request, reply) => {
    const role = request.body?.role;
    if (!isMemberRole(role)) throw refused(400, 'Send {"role": "viewer"} or {"role": "editor"}.', 'role');
    const invite = await members.createInvite(request.params.name, role, actorOfRequest(request));
    reply.code(201);
    return {
      app_name: invite.app.appName,
      role: invite.role,
      link: inviteLink(site.options.botUsername?.(), invite.code),
      // what to send the bot when the link cannot be made yet
      start: `/start join_${invite.code}`,
      expires_at: invite.expiresAt.toISOString(),
    };
  });

  api.delete<{ Params: { name: string; ref: string } }>(
    '/members/:ref',
    validated({ params: nameAnd({ ref: text(32) }) }),
    async (request, reply) => {
      const actor = actorOfRequest(request);
      // "me": the signed-in member leaves (a viewer does not see the list the references come from)
      if (request.params.ref === 'me') await members.leave(request.params.name, actor);
      else await members.remove(request.params.name, request.params.ref, actor);
      return reply.code(204).send();
    },
  );

  api.post<NamedApp & { Body: { ref?: unknown } }>('/transfer', nameOnly, async (request) => {
    const ref = request.body?.ref;
    if (typeof ref !== 'string') throw refused(400, 'Send {"ref": "<member reference>"}, as listed.', 'ref');
    return documents.one((await members.transfer(request.params.name, ref, actorOfRequest(request))).app);
  });
};

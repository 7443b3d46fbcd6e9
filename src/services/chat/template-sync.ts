import type { EntityManager } from '@mikro-orm/postgresql';
import { Clinic, Template } from '../../entities/index.ts';
import type { MessagingNetwork } from '../../network/adapter.ts';
import { SANDBOX_TEMPLATES } from '../../network/sandbox-templates.ts';

/**
 * Copies the templates of the clinic's number from the network into the clinic's template table
 * (what GET /v1/chat/templates lists and sends check), replacing what was there. Which of them
 * carry media and the free-text fallback is the clinic's setting; the sandbox's are named.
 */
export async function syncTemplates(
  em: EntityManager,
  clinicId: number,
  network: MessagingNetwork,
): Promise<number> {
  const clinic = await em.findOneOrFail(Clinic, clinicId);
  if (!clinic.phone) return 0;
  const templates = await network.templates(clinic.phone);
  const roles = new Map(SANDBOX_TEMPLATES.filter((t) => t.role).map((t) => [t.name, t.role as string]));
  await em.transactional(async (tx) => {
    await tx.nativeDelete(Template, { clinic: clinicId }, { filters: false });
    for (const t of templates)
      tx.create(Template, {
        clinic: tx.getReference(Clinic, clinicId),
        name: t.name,
        displayName: t.display_name,
        language: t.language,
        modelType: t.model_type,
        category: t.category,
        status: t.status,
        rejectionReason: t.rejection_reason,
        parameterCount: t.parameter_count,
        body: t.body,
        header: t.header ?? null,
        footer: t.footer ?? null,
        buttons: t.buttons ?? null,
        hasActiveVersion: true,
        role: roles.get(t.name) ?? null,
      });
  });
  return templates.length;
}

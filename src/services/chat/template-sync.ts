import type { EntityManager } from '@mikro-orm/postgresql';
import { Clinic, Template } from '../../entities/index.ts';
import { clockNow } from '../../lib/request-context.ts';
import type { MessagingNetwork, NetworkTemplate } from '../../network/adapter.ts';
import { SANDBOX_TEMPLATES } from '../../network/sandbox-templates.ts';
import { clinicWrite } from '../unit-of-work.ts';

/**
 * Copies the templates of the clinic's number from the network into the clinic's template table
 * (what GET /v1/chat/templates lists and sends check), replacing what was there.
 */
export async function syncTemplates(
  em: EntityManager,
  clinicId: number,
  network: MessagingNetwork,
): Promise<number> {
  const clinic = await em.findOneOrFail(Clinic, clinicId);
  if (!clinic.phone) return 0;
  const templates = await network.templates(clinic.phone);
  await replaceTemplates(em, clinicId, templates);
  return templates.length;
}

/**
 * Replaces the clinic's templates with `templates` as one write (the unit of work): a failure
 * half-way (a row the database refuses) leaves the templates as they were, never none.
 */
export function replaceTemplates(
  em: EntityManager,
  clinicId: number,
  templates: NetworkTemplate[],
): Promise<void> {
  return clinicWrite(em, clinicId, clockNow(), (write) => writeTemplates(write.em, clinicId, templates));
}

/**
 * Which templates carry media and the free-text fallback is the clinic's setting; the sandbox
 * names its own (src/network/sandbox-templates.ts).
 */
const roles = new Map(SANDBOX_TEMPLATES.filter((t) => t.role).map((t) => [t.name, t.role as string]));

/**
 * The delete and inserts of `replaceTemplates`, in a transaction the caller holds (the unit of
 * work's, or the demo seed's load): outside one, the delete would commit alone.
 */
export async function writeTemplates(
  em: EntityManager,
  clinicId: number,
  templates: NetworkTemplate[],
): Promise<void> {
  if (!em.isInTransaction())
    throw new Error('writeTemplates runs inside a transaction; use replaceTemplates for a write of its own.');
  await em.nativeDelete(Template, { clinic: clinicId }, { filters: false });
  for (const t of templates)
    em.create(Template, {
      clinic: em.getReference(Clinic, clinicId),
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
      hasActiveVersion: t.has_active_version ?? true,
      role: roles.get(t.name) ?? null,
    });
  await em.flush();
}

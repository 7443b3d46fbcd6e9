import { readAll } from '../../db/list.ts';
import { Template as TemplateEntity } from '../../entities/index.ts';
import { readsOf, type ServiceContext } from '../../lib/request-context.ts';
import type { Row, View } from '../resource.ts';
import { booleanParam } from './filters.ts';
import { notSendableReason } from './template.resource.ts';

/**
 * GET /v1/chat/templates: every template of the clinic's number, by name; `sendable=true` keeps
 * the sendable ones (false: the others). Unsendable templates are listed with their reason.
 */
export async function listTemplates(
  ctx: ServiceContext,
  args: { sendable?: unknown; view: View },
): Promise<Row[]> {
  const sendable = booleanParam(args.sendable, 'sendable');
  const read = {
    ...args.view.read,
    fields: [...new Set([...args.view.read.fields, 'status', 'hasActiveVersion', 'modelType'])],
  };
  const rows = await readAll(readsOf(ctx), TemplateEntity, read, undefined, [{ name: 'asc' }, { id: 'asc' }]);
  const pc = ctx.principal;
  return rows
    .filter((r) => sendable === undefined || (notSendableReason(r) === null) === sendable)
    .map((r) => args.view.present(r, pc));
}

import type { Selectable } from 'kysely';
import type { EmailTemplateTable } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, validationError } from '../../lib/errors.ts';
import type { DefaultableStore } from './defaultable-store.ts';
import type { RefuseIfReferenced } from './delivery-references.ts';
import { DEFAULT_TEMPLATE } from './email/default-template.ts';
import { missingPlaceholders } from './email/template-render.ts';
import { bool, iso } from './row-values.ts';

export type TemplateRow = Selectable<EmailTemplateTable>;

export interface TemplateInput {
  name: string;
  subject: string;
  body: string;
  is_default?: boolean;
}

const templateView = (row: TemplateRow) => ({
  id: Number(row.id),
  name: row.name,
  subject: row.subject,
  body: row.body,
  is_default: bool(row.is_default),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
});

/** The email templates notifications are rendered with, the shipped one among them. */
export function createTemplateService(deps: {
  clock: Clock;
  store: DefaultableStore<TemplateRow>;
  refuseIfReferenced: RefuseIfReferenced;
}) {
  const { clock, store: templates, refuseIfReferenced } = deps;

  function checkedTemplate(input: TemplateInput) {
    const missing = missingPlaceholders(input.body);
    if (missing.length) {
      throw new AppError('validation_failed', `body: missing required placeholders ${missing.join(', ')}`, {
        fields: [{ field: 'body', message: `missing required placeholders: ${missing.join(', ')}` }],
        extra: { missing_placeholders: missing },
      });
    }
    if (!input.name.trim()) throw validationError('name', 'must not be empty');
    return { name: input.name.trim(), subject: input.subject, body: input.body, updated_at: clock.now().getTime() };
  }

  /** Every organization starts with the shipped template (created under the org lock: once). */
  async function ensureDefaultTemplate(orgId: number): Promise<void> {
    if (await templates.findDefault(orgId)) return;
    await templates.createIfNone(orgId, { ...DEFAULT_TEMPLATE, updated_at: clock.now().getTime() });
  }

  return {
    async list(orgId: number, page: { offset: number; limit: number }) {
      await ensureDefaultTemplate(orgId);
      const { rows, total } = await templates.list(orgId, page);
      return { results: rows.map(templateView), total };
    },
    get: async (orgId: number, id: number) => templateView(await templates.get(orgId, id)),
    create: async (orgId: number, input: TemplateInput) =>
      templateView(await templates.create(orgId, checkedTemplate(input), input.is_default)),
    update: async (orgId: number, id: number, input: TemplateInput) =>
      templateView(await templates.update(orgId, id, checkedTemplate(input), input.is_default)),
    delete: (orgId: number, id: number) =>
      templates.delete(orgId, id, (_row, tx) => refuseIfReferenced(orgId, 'template', id, tx)),
    ensureDefault: ensureDefaultTemplate,
  };
}

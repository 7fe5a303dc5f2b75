import { useDeferredValue, useState, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { Field } from '../../ui/field.tsx';
import { formatDateTime } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { Table } from '../../ui/table.tsx';
import { EmailFrame } from './email-frame.tsx';
import { ResourceActions } from './resource-actions.tsx';
import {
  useDeleteTemplate,
  useOrganization,
  useSaveTemplate,
  useTemplates,
  type Template,
  type TemplateInput,
} from './delivery-queries.ts';
import { OPTIONAL_PLACEHOLDERS, previewTemplate, REQUIRED_PLACEHOLDERS, sampleValues } from './template-preview.ts';

type Editing = { kind: 'new' } | { kind: 'edit'; template: Template } | null;

/** Settings → Email templates (spec 2.7): the subject and HTML body of rule emails, with a preview. */
export function TemplatesPage() {
  const templates = useTemplates();
  const [editing, setEditing] = useState<Editing>(null);
  const remove = useDeleteTemplate();
  const starter = templates.data?.find((template) => template.is_default) ?? templates.data?.[0];
  return (
    <Page
      title="Email templates"
      actions={
        editing === null && (
          <button
            type="button"
            className="primary"
            onClick={() => setEditing({ kind: 'new' })}
            disabled={!templates.data}
          >
            New template
          </button>
        )
      }
    >
      {templates.isPending && <Loading />}
      <ErrorNotice error={templates.error} />
      <ErrorNotice error={remove.error} title="Not deleted" />
      {editing && (
        <TemplateEditor
          key={editing.kind === 'edit' ? editing.template.id : 'new'}
          template={editing.kind === 'edit' ? editing.template : undefined}
          starter={starter}
          onDone={() => setEditing(null)}
        />
      )}
      {templates.data && templates.data.length > 0 && (
        <Table headings={['Name', 'Subject', 'Changed']} actions="Actions">
          {templates.data.map((template) => (
            <tr key={template.id}>
              <td>
                {template.name} {template.is_default && <span className="badge">default</span>}
              </td>
              <td className="wrap">{template.subject}</td>
              <td>{formatDateTime(template.updated_at)}</td>
              <td>
                <ResourceActions
                  name={template.name}
                  rules={{ template: template.id }}
                  onDelete={() => remove.mutate(template.id)}
                >
                  <button
                    type="button"
                    onClick={() => setEditing({ kind: 'edit', template })}
                    aria-label={`Edit ${template.name}`}
                  >
                    Edit
                  </button>
                </ResourceActions>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Page>
  );
}

/** Creates or replaces a template; the preview fills the placeholders with a sample run's values. */
export function TemplateEditor({
  template,
  starter,
  onDone,
}: {
  template?: Template;
  starter?: Template;
  onDone: () => void;
}) {
  const organization = useOrganization();
  const [form, setForm] = useState<TemplateInput>(() => ({
    name: template?.name ?? '',
    // A new template starts from an existing one, so it has every placeholder to begin with.
    subject: template?.subject ?? starter?.subject ?? 'Alert {alert_rule_name}: {number_of_hits} new hits',
    body: template?.body ?? starter?.body ?? '',
    is_default: template?.is_default ?? false,
  }));
  const save = useSaveTemplate(template);
  // Typing stays quick however long the body; the preview catches up.
  const shown = useDeferredValue(form);
  const preview = previewTemplate(shown, sampleValues(organization.data?.dashboard_url ?? window.location.origin));
  const error = save.error instanceof ApiError ? save.error : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(form, { onSuccess: onDone });
  };
  const set = <K extends keyof TemplateInput>(key: K, value: TemplateInput[K]) =>
    setForm((current) => ({ ...current, [key]: value }));

  return (
    <div className="card template-editor">
      <form onSubmit={submit} noValidate aria-labelledby="template-editor">
        <h2 id="template-editor">{template ? `Edit “${template.name}”` : 'New template'}</h2>
        <ErrorNotice error={save.error} title="Not saved" fieldsShown={['name', 'subject', 'body']} />
        <Field label="Name" error={error?.fieldMessage('name')}>
          {(props) => (
            <input
              {...props}
              type="text"
              maxLength={200}
              value={form.name}
              onChange={(event) => set('name', event.target.value)}
            />
          )}
        </Field>
        <Field label="Subject" hint="Plain text; placeholders work here too." error={error?.fieldMessage('subject')}>
          {(props) => (
            <input
              {...props}
              type="text"
              maxLength={998}
              value={form.subject}
              onChange={(event) => set('subject', event.target.value)}
            />
          )}
        </Field>
        <Field label="Body (HTML)" error={error?.fieldMessage('body')}>
          {(props) => (
            <textarea
              {...props}
              rows={12}
              className="code"
              spellCheck={false}
              value={form.body}
              onChange={(event) => set('body', event.target.value)}
            />
          )}
        </Field>
        <Placeholders body={form.body} />
        <div className="actions">
          <label className="check">
            <input
              type="checkbox"
              checked={form.is_default}
              onChange={(event) => set('is_default', event.target.checked)}
            />
            The default template
          </label>
          <button type="submit" className="primary" disabled={save.isPending}>
            {template ? 'Save template' : 'Create template'}
          </button>
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        </div>
      </form>
      <section aria-labelledby="template-preview" className="preview">
        <h3 id="template-preview">Preview</h3>
        {preview.missing.length > 0 && (
          <p className="notice error" role="status">
            The body lacks {preview.missing.join(', ')}: the server will refuse it.
          </p>
        )}
        {preview.unknown.length > 0 && (
          <p className="notice warning">
            {preview.unknown.join(', ')} {preview.unknown.length === 1 ? 'is' : 'are'} not a placeholder and will be
            sent as typed.
          </p>
        )}
        <p>
          <strong>Subject:</strong> <span data-testid="preview-subject">{preview.subject}</span>
        </p>
        <EmailFrame title="Email body preview" html={preview.html} />
      </section>
    </div>
  );
}

/** Which placeholders the body uses: the required five must all be there (spec 2.7). */
function Placeholders({ body }: { body: string }) {
  return (
    <div className="placeholders">
      <p className="hint muted">Placeholders, replaced in each email:</p>
      <ul className="chips" aria-label="Placeholders">
        {[...REQUIRED_PLACEHOLDERS, ...OPTIONAL_PLACEHOLDERS].map((name) => {
          const used = body.includes(`{${name}}`);
          const required = (REQUIRED_PLACEHOLDERS as readonly string[]).includes(name);
          return (
            <li key={name} className={used ? 'used' : required ? 'missing' : undefined}>
              <code>{`{${name}}`}</code> {used ? '✓' : required ? '(required, missing)' : '(optional)'}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

import { useState, type FormEvent } from 'react';
import { Field } from '../../ui/field.tsx';
import { formatDateTime } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { INCIDENT_STATUSES, statusLabel, type IncidentStatus } from './inbox-search.ts';
import {
  useAssignees,
  useIncident,
  useIncidentEvents,
  useUpdateIncident,
  type Incident,
  type IncidentChange,
  type IncidentEvent,
} from './incident-work-queries.ts';

/** What a change did, in words for the status line. */
function describeChange(change: IncidentChange): string {
  if (change.exclude_hits) return 'Marked false positive; its hits are excluded.';
  if (change.status) return `Status set to ${statusLabel(change.status).toLowerCase()}.`;
  if (change.assignee_id !== undefined) return change.assignee_id === null ? 'Unassigned.' : 'Assigned.';
  return 'Note added.';
}

/**
 * Working an incident: its status, who has it, notes, and the history of all three (who and
 * when). `ruleDeleted`: a deleted rule has no exclusions, so "false positive and exclude" is not offered.
 */
export function IncidentWork({ matchId, ruleDeleted }: { matchId: number; ruleDeleted: boolean }) {
  const incident = useIncident(matchId);
  const [done, setDone] = useState<string | null>(null);
  const update = useUpdateIncident(matchId, (change) => setDone(describeChange(change)));
  if (incident.isPending) return <Loading />;
  if (!incident.data) return <ErrorNotice error={incident.error} />;
  return (
    <section aria-labelledby="work-heading" className="card">
      <h2 id="work-heading">Work this incident</h2>
      <div className="actions">
        <StatusControl
          incident={incident.data}
          busy={update.isPending}
          onChange={(status) => update.mutate({ status })}
        />
        <AssigneeControl
          incident={incident.data}
          busy={update.isPending}
          onChange={(assignee_id) => update.mutate({ assignee_id })}
        />
        {!ruleDeleted && incident.data.incident_status !== 'false_positive' && (
          <button
            type="button"
            disabled={update.isPending}
            onClick={() => update.mutate({ status: 'false_positive', exclude_hits: true })}
          >
            False positive: exclude all its hits
          </button>
        )}
      </div>
      {incident.data.status_changed_at && (
        <p className="muted">Status last changed {formatDateTime(incident.data.status_changed_at)}.</p>
      )}
      <ErrorNotice error={update.error} title="Not changed" />
      {done && (
        <p role="status" className="notice success">
          {done}
        </p>
      )}
      <NoteForm busy={update.isPending} onAdd={(note) => update.mutate({ note })} />
      <History matchId={matchId} />
    </section>
  );
}

function StatusControl(props: { incident: Incident; busy: boolean; onChange: (status: IncidentStatus) => void }) {
  return (
    <Field label="Status">
      {(control) => (
        <select
          {...control}
          value={props.incident.incident_status}
          disabled={props.busy}
          onChange={(event) => props.onChange(event.target.value as IncidentStatus)}
        >
          {INCIDENT_STATUSES.map((status) => (
            <option key={status} value={status}>
              {statusLabel(status)}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

function AssigneeControl(props: { incident: Incident; busy: boolean; onChange: (assigneeId: number | null) => void }) {
  const assignees = useAssignees();
  const current = props.incident.assignee;
  // Someone assigned and since disabled is still shown, though no longer offered to others.
  const choices = [...(assignees.data ?? [])];
  if (current && !choices.some((user) => user.id === current.id)) choices.push(current);
  return (
    <Field label="Assignee">
      {(control) => (
        <select
          {...control}
          value={current?.id ?? ''}
          disabled={props.busy || assignees.isPending}
          onChange={(event) => props.onChange(event.target.value ? Number(event.target.value) : null)}
        >
          <option value="">Nobody</option>
          {choices.map((user) => (
            <option key={user.id} value={user.id}>
              {user.email}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

function NoteForm({ busy, onAdd }: { busy: boolean; onAdd: (note: string) => void }) {
  const [note, setNote] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!note.trim()) return;
    onAdd(note.trim());
    setNote('');
  };
  return (
    <form onSubmit={submit} aria-label="Add a note">
      <Field label="Note" hint="Kept in the incident's history with your name and the time.">
        {(control) => (
          <textarea
            {...control}
            rows={3}
            maxLength={5000}
            value={note}
            onChange={(event) => setNote(event.target.value)}
          />
        )}
      </Field>
      <button type="submit" disabled={busy || !note.trim()}>
        Add note
      </button>
    </form>
  );
}

/** "status: new → acknowledged", "assignee: nobody → bob@…", or the note itself. */
function describeEvent(event: IncidentEvent): string {
  if (event.kind === 'note') return event.note ?? '';
  const name = (value: string | null) =>
    value === null ? 'nobody' : event.kind === 'status' ? statusLabel(value).toLowerCase() : value;
  return `${event.kind === 'status' ? 'Status' : 'Assignee'}: ${name(event.from)} → ${name(event.to)}`;
}

function History({ matchId }: { matchId: number }) {
  const events = useIncidentEvents(matchId);
  if (events.isPending) return <Loading />;
  if (!events.data) return <ErrorNotice error={events.error} />;
  return (
    <>
      <h3>History</h3>
      {events.data.length === 0 ? (
        <p className="muted">Nothing yet: the incident is as its run left it.</p>
      ) : (
        <ol className="incident-history" aria-label="History">
          {events.data.map((event) => (
            <li key={event.id}>
              <span className="muted">
                {formatDateTime(event.created_at)} · {event.user?.email ?? 'someone'}
              </span>{' '}
              <span className={event.kind === 'note' ? 'note' : undefined}>{describeEvent(event)}</span>
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

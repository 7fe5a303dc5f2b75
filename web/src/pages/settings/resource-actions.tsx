import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { ConfirmButton } from '../../ui/confirm-button.tsx';
import type { RulesSearch } from '../rules/rules-search.ts';

/** A delivery resource's row actions: its own (children), the rules using it, and delete (asked twice). */
export function ResourceActions(props: {
  name: string;
  rules: RulesSearch;
  onDelete?: () => void;
  children?: ReactNode;
}) {
  return (
    <div className="actions">
      {props.children}
      <Link to="/rules" search={props.rules} aria-label={`Rules using ${props.name}`}>
        Rules
      </Link>
      {props.onDelete && (
        <ConfirmButton label={`Delete ${props.name}`} confirm={`Delete ${props.name}`} onConfirm={props.onDelete}>
          Delete
        </ConfirmButton>
      )}
    </div>
  );
}

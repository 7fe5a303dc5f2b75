import { humanize } from '../../rules/args-fields.tsx';
import { hitFields, type PresentedHit } from '../hit-fields.ts';

/** A hit of a source without a presenter: its fields as the source gives them. */
export function FieldList({ hit }: { hit: PresentedHit }) {
  const fields = hitFields(hit);
  return (
    <>
      <dl className="hit-fields">
        {fields
          .filter((field) => !field.block)
          .map((field) => (
            <div key={field.name}>
              <dt>{humanize(field.name)}</dt>
              <dd>{field.text}</dd>
            </div>
          ))}
      </dl>
      {fields
        .filter((field) => field.block)
        .map((field) => (
          <p key={field.name} className="text" aria-label={humanize(field.name)}>
            {field.text}
          </p>
        ))}
    </>
  );
}

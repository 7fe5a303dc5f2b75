import type { FieldControlProps } from '../ui/field.tsx';

/** An authenticator code or a backup code (letters and a hyphen): no auto-correction, capitals. */
export function OtpInput(
  props: FieldControlProps & { value: string; onChange: (value: string) => void; autoFocus?: boolean },
) {
  const { value, onChange, ...control } = props;
  return (
    <input
      {...control}
      autoComplete="one-time-code"
      autoCapitalize="characters"
      spellCheck={false}
      required
      value={value}
      onChange={(event) => onChange(event.target.value)}
    />
  );
}

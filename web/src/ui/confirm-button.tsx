import { useEffect, useRef, useState, type ReactNode } from 'react';

/**
 * A button for an action that needs a second thought (delete): the first press asks, in place,
 * and focus moves to the confirming button; Escape or "Keep" puts it back.
 */
export function ConfirmButton(props: {
  children: ReactNode;
  confirm: string;
  onConfirm: () => void;
  disabled?: boolean;
  label?: string;
}) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const startRef = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
    else if (wasAsking.current) startRef.current?.focus();
    wasAsking.current = asking;
  }, [asking]);

  if (!asking) {
    return (
      <button
        ref={startRef}
        type="button"
        onClick={() => setAsking(true)}
        disabled={props.disabled}
        aria-label={props.label}
      >
        {props.children}
      </button>
    );
  }
  return (
    <span
      className="actions"
      role="group"
      aria-label={props.confirm}
      onKeyDown={(event) => event.key === 'Escape' && setAsking(false)}
    >
      <button
        ref={confirmRef}
        type="button"
        className="danger"
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        {props.confirm}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep
      </button>
    </span>
  );
}

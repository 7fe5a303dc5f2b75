import { useState, type ReactNode } from 'react';

/**
 * A secret the server shows only in the response that made it (a webhook's signing secret, an
 * API key): the text around it, the secret, a copy button and the button that puts it away.
 */
export function ShownOnce(props: {
  children: ReactNode;
  secret: string;
  testId: string;
  copyLabel: string;
  onClose: () => void;
}) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="notice success" role="status">
      <p>{props.children}</p>
      <p>
        <code className="secret" data-testid={props.testId}>
          {props.secret}
        </code>
      </p>
      <div className="actions">
        <button
          type="button"
          onClick={() => {
            void navigator.clipboard?.writeText(props.secret).then(() => setCopied(true));
          }}
        >
          {copied ? 'Copied' : props.copyLabel}
        </button>
        <button type="button" onClick={props.onClose}>
          I stored it
        </button>
      </div>
    </div>
  );
}

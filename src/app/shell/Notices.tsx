/**
 * Messages about bad input and failures: what went wrong and what was done instead.
 * Info and warnings fade after a while; errors stay until dismissed.
 */
import { useEffect } from 'react';
import { useStore } from '../store.ts';
import type { Notice } from '../storeTypes.ts';

/** How long an info or warning notice stays, ms. */
const AUTO_DISMISS_MS = 15_000;

function Toast({ notice }: { notice: Notice }) {
  const dismiss = useStore((s) => s.dismiss);
  useEffect(() => {
    if (notice.level === 'error') return;
    const id = window.setTimeout(() => dismiss(notice.id), AUTO_DISMISS_MS);
    return () => window.clearTimeout(id);
  }, [notice, dismiss]);
  return (
    <div className={`notice notice-${notice.level}`} data-level={notice.level}>
      <span className="notice-icon" aria-hidden>
        {notice.level === 'info' ? 'i' : '!'}
      </span>
      <span className="notice-text">{notice.text}</span>
      <button type="button" className="notice-close" aria-label="Dismiss" onClick={() => dismiss(notice.id)}>
        ×
      </button>
    </div>
  );
}

export function Notices() {
  const notices = useStore((s) => s.notices);
  if (notices.length === 0) return null;
  return (
    <div className="notices" data-testid="notices" role="status" aria-live="polite">
      {notices.map((n) => (
        <Toast key={n.id} notice={n} />
      ))}
    </div>
  );
}

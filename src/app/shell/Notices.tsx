/** Dismissable messages about bad input and failures (DESIGN §9): what went wrong, what was done. */
import { useStore } from '../state/store.ts';

export function Notices() {
  const notices = useStore((s) => s.notices);
  const dismiss = useStore((s) => s.dismiss);
  if (notices.length === 0) return null;
  return (
    <div className="notices" data-testid="notices" role="status" aria-live="polite">
      {notices.map((n) => (
        <div key={n.id} className={`notice notice-${n.level}`} data-level={n.level}>
          <span className="notice-icon" aria-hidden>
            {n.level === 'error' ? '!' : n.level === 'warning' ? '!' : 'i'}
          </span>
          <span className="notice-text">{n.text}</span>
          <button type="button" className="notice-close" aria-label="Dismiss" onClick={() => dismiss(n.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

/** The list of environments, grouped by family, with each one's title (description on hover). */
import { useStore } from '../state/store.ts';
import type { CatalogEntry } from '../state/storeTypes.ts';
import { keepFocus } from './EpisodeControls.tsx';

const FAMILIES: { family: string; title: string; blurb: string }[] = [
  { family: 'grid', title: 'Grid worlds', blurb: 'Navigate with a partial, egocentric view.' },
  { family: 'tool', title: 'Tool APIs', blurb: 'Multi-turn: call tools, then answer.' },
];

/** The env's family; a broken registration (no spec) is grouped by its id prefix. */
function familyOf(c: CatalogEntry): string {
  if (c.spec) return c.spec.family;
  const prefix = c.id.split('/')[0];
  return prefix === 'tools' ? 'tool' : prefix;
}

export function EnvPicker() {
  const catalog = useStore((s) => s.catalog);
  const envId = useStore((s) => s.envId);
  const open = useStore((s) => s.open);
  const known = new Set(FAMILIES.map((f) => f.family));
  const groups = [
    ...FAMILIES.map((f) => ({ ...f, items: catalog.filter((c) => familyOf(c) === f.family) })),
    { family: 'other', title: 'Other', blurb: '', items: catalog.filter((c) => !known.has(familyOf(c))) },
  ].filter((g) => g.items.length > 0);

  return (
    <nav className="env-picker" data-testid="env-picker" aria-label="Environments">
      {catalog.length === 0 && (
        <p className="empty-note">No environments are registered yet. They appear here as soon as their code lands.</p>
      )}
      {groups.map((g) => (
        <section key={g.family} className="env-group">
          <h2 className="env-group-title">{g.title}</h2>
          {g.blurb && <p className="env-group-blurb">{g.blurb}</p>}
          <ul>
            {g.items.map((c) => (
              <li key={c.id}>
                <button
                  type="button"
                  className="env-item"
                  data-env-id={c.id}
                  aria-current={c.id === envId ? 'true' : undefined}
                  disabled={!c.spec}
                  title={c.spec ? c.spec.description : `Broken: ${c.error}`}
                  onClick={() => c.id !== envId && open({ envId: c.id, kwargs: {} })}
                  {...keepFocus}
                >
                  <span className="env-item-title">{c.spec?.title ?? c.id}</span>
                  <span className="env-item-id">{c.spec ? c.id : 'failed to load'}</span>
                </button>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </nav>
  );
}

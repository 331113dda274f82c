/** The list of environments, grouped by family, with each one's title (description on hover). */
import { useStore } from '../store.ts';
import type { CatalogEntry } from '../storeTypes.ts';
import { keepFocus } from './EpisodeControls.tsx';
import { ENV_FAMILIES } from '../../core/envs/families.ts';

/** The env's family name; a broken registration (no spec) is grouped by its id's prefix. */
function groupOf(c: CatalogEntry): string {
  if (c.spec) return c.spec.family;
  return ENV_FAMILIES.find((f) => c.id.startsWith(f.idPrefix))?.name ?? c.id.split('/')[0];
}

export function EnvPicker() {
  const catalog = useStore((s) => s.catalog);
  const envId = useStore((s) => s.envId);
  const open = useStore((s) => s.open);
  const byGroup = new Map<string, CatalogEntry[]>();
  for (const c of catalog) {
    const g = groupOf(c);
    byGroup.set(g, [...(byGroup.get(g) ?? []), c]);
  }
  const other = catalog.filter((c) => !ENV_FAMILIES.some((f) => f.name === groupOf(c)));
  const groups = [
    ...ENV_FAMILIES.map((f) => ({ family: f.name as string, title: f.title, blurb: f.blurb, items: byGroup.get(f.name) ?? [] })),
    { family: 'other', title: 'Other', blurb: '', items: other },
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

import { useId, useState } from 'react';
import { ErrorNotice } from '../../ui/notices.tsx';
import { useDebouncedValue } from '../../ui/use-debounced-value.ts';
import { useChannelCategories, useChannels } from './search-queries.ts';

/**
 * Picks the channels a search is restricted to (channel_ids): narrow the list by category and by
 * name, tick channels; the picked ones stay listed as removable chips. No channel: all of them.
 */
export function ChannelFilter({ selected, onChange }: { selected: number[]; onChange: (ids: number[]) => void }) {
  const ids = { category: useId(), search: useId(), list: useId() };
  const [categoryId, setCategoryId] = useState<number | undefined>();
  const [text, setText] = useState('');
  const search = useDebouncedValue(text.trim(), 250);
  // Names of channels ticked from a list, for their chips once the list shows others.
  const [names, setNames] = useState<Map<number, string>>(new Map());

  const categories = useChannelCategories();
  const channels = useChannels(categoryId, search);

  const label = (channel: { id: number; username: string | null; title: string }) =>
    channel.username ? `${channel.title} (@${channel.username})` : channel.title;
  const toggle = (channel: { id: number; username: string | null; title: string }, on: boolean) => {
    if (on) setNames((current) => new Map(current).set(channel.id, label(channel)));
    onChange(on ? [...selected, channel.id] : selected.filter((id) => id !== channel.id));
  };

  return (
    <fieldset>
      <legend>Channels</legend>
      {selected.length === 0 ? (
        <p className="muted">All channels</p>
      ) : (
        <ul className="chips" aria-label="Selected channels">
          {selected.map((id) => (
            <li key={id}>
              <button
                type="button"
                onClick={() => onChange(selected.filter((other) => other !== id))}
                aria-label={`Remove ${names.get(id) ?? `channel ${id}`}`}
              >
                {names.get(id) ?? `#${id}`} ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="field">
        <label htmlFor={ids.category}>Category</label>
        <select
          id={ids.category}
          value={categoryId ?? ''}
          onChange={(event) => setCategoryId(event.target.value ? Number(event.target.value) : undefined)}
        >
          <option value="">All categories</option>
          {categories.data?.items.map((category) => (
            <option key={category.id} value={category.id}>
              {category.name} ({category.channel_count})
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={ids.search}>Find a channel</label>
        <input
          id={ids.search}
          type="search"
          value={text}
          onChange={(event) => setText(event.target.value)}
          aria-controls={ids.list}
        />
      </div>
      <ErrorNotice error={categories.error ?? channels.error} />
      <ul id={ids.list} className="channel-list" aria-label="Channels" aria-busy={channels.isFetching}>
        {channels.data?.items.map((channel) => (
          <li key={channel.id}>
            <label className="check">
              <input
                type="checkbox"
                checked={selected.includes(channel.id)}
                onChange={(event) => toggle(channel, event.target.checked)}
              />
              {label(channel)}
            </label>
          </li>
        ))}
      </ul>
      {channels.data && channels.data.total > channels.data.items.length && (
        <p className="muted">
          {channels.data.items.length} of {channels.data.total} shown; type to narrow.
        </p>
      )}
    </fieldset>
  );
}

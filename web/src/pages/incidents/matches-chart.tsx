import { Bar, BarChart, CartesianGrid, Cell, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatDateTime, formatDay } from '../../ui/format.ts';
import type { Match } from '../rules/rule-queries.ts';

/** The chart's points: one per run with hits, oldest first (the API lists them newest first). */
export function chartPoints(matches: Match[]) {
  return [...matches]
    .sort((a, b) => Date.parse(a.window_end) - Date.parse(b.window_end))
    .map((match) => ({
      id: match.id,
      at: Date.parse(match.window_end),
      hits: match.new_hits,
      excluded: match.excluded_hits,
    }));
}

/**
 * A rule's matches over time: new and excluded hits per run, stacked. Loaded with recharts in a
 * chunk of its own when a page shows it (MatchesChartLazy), so other pages do not carry it.
 */
export default function MatchesChart({ matches, highlight }: { matches: Match[]; highlight?: number }) {
  const points = chartPoints(matches);
  return (
    <ResponsiveContainer width="100%" height={220}>
      {/* The figure's caption says what the chart shows; the chart itself is hidden from screen
          readers, so it must not take the keyboard focus either (recharts' accessibility layer). */}
      <BarChart
        data={points}
        margin={{ top: 8, right: 8, bottom: 0, left: -16 }}
        maxBarSize={48}
        accessibilityLayer={false}
      >
        <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="var(--border)" />
        <XAxis dataKey="at" tickFormatter={formatDay} stroke="var(--muted)" fontSize={12} />
        <YAxis allowDecimals={false} stroke="var(--muted)" fontSize={12} />
        <Tooltip
          labelFormatter={(at) => formatDateTime(Number(at))}
          contentStyle={{ background: 'var(--surface)', border: '1px solid var(--border)', color: 'var(--text)' }}
        />
        <Legend />
        <Bar dataKey="hits" name="New hits" stackId="run" fill="var(--accent)" isAnimationActive={false}>
          {/* The match the page shows stands out; the others are dimmed. */}
          {points.map((point) => (
            <Cell key={point.id} fillOpacity={highlight === undefined || point.id === highlight ? 1 : 0.5} />
          ))}
        </Bar>
        <Bar dataKey="excluded" name="Excluded" stackId="run" fill="var(--muted)" isAnimationActive={false} />
      </BarChart>
    </ResponsiveContainer>
  );
}

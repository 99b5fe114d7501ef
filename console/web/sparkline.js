// Rate series (oldest first) as small inline SVGs.
import { svg } from './dom.js';
import { fmtDuration, fmtRate } from './format.js';
import { state } from './shell.js';

function numbers(points) {
  return Array.isArray(points) ? points.filter((p) => typeof p === 'number') : [];
}

// What a rate series says, for a tooltip: its span, maximum and last value.
export function sparkTitle(points, label) {
  const pts = numbers(points);
  if (pts.length === 0) return `${label}: no samples yet`;
  const max = pts.reduce((m, p) => Math.max(m, p), 0);
  const span = fmtDuration(pts.length * (state.session ? state.session.sample_seconds : 1));
  return `${label} over the last ${span}: max ${fmtRate(max)}/s, last ${fmtRate(pts[pts.length - 1])}/s`;
}

// An inline SVG of a rate series (oldest first), scaled to its own maximum.
// Two shapes at most (its base line is the CSS border): an overview draws
// two per queue, so each element counts on every refresh. The caller puts
// sparkTitle() on the element around it.
export function sparkline(points, label) {
  const w = 64;
  const h = 16;
  const pts = numbers(points);
  const max = pts.reduce((m, p) => Math.max(m, p), 0);
  const last = pts.length ? pts[pts.length - 1] : null;
  const node = svg('svg', {
    class: 'spark',
    width: w,
    height: h,
    viewBox: `0 0 ${w} ${h}`,
    role: 'img',
    'aria-label': label,
    'data-points': pts.length,
    'data-max': max,
    'data-last': last === null ? '' : last,
  });
  if (pts.length === 0) return node;
  const step = pts.length > 1 ? w / (pts.length - 1) : 0;
  const y = (p) => (max > 0 ? h - 1 - (p / max) * (h - 3) : h - 1).toFixed(1);
  const coords = pts.map((p, i) => `${(i * step).toFixed(1)},${y(p)}`);
  if (pts.length === 1) coords.push(`${w},${y(pts[0])}`);
  node.append(svg('polygon', { class: 'spark-area', points: `0,${h} ${coords.join(' ')} ${w},${h}` }));
  node.append(svg('polyline', { class: 'spark-line', points: coords.join(' ') }));
  return node;
}

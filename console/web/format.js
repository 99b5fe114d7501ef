// Numbers, durations and times as the page shows them.

const intFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function fmtInt(n) {
  return n === null || n === undefined ? '—' : intFormat.format(n);
}

export function fmtRate(r) {
  if (r === null || r === undefined) return '—';
  if (r === 0) return '0';
  if (r < 10) return r.toFixed(2);
  if (r < 100) return r.toFixed(1);
  return intFormat.format(Math.round(r));
}

// 42 s, 10 min 3 s, 2 h 5 min, 3 d 4 h
export function fmtDuration(sec) {
  if (sec === null || sec === undefined) return '—';
  const s = Math.max(0, Math.floor(sec));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

// 0 B, 512 B, 80 kB, 3.2 MB, 12 GB (powers of 1024, as pg_size_pretty)
export function fmtBytes(n) {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let v = Number(n);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${i === 0 || v >= 10 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleTimeString('en-GB');
}

// PostgreSQL's timestamptz text (2026-12-02T21:17:10.08306+00:00): parsed
// with the fraction cut to milliseconds, which every Date parser takes.
export function parseTs(text) {
  const m = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(\.\d+)?([+-]\d\d(?::?\d\d)?|Z)?$/.exec(String(text));
  if (!m) return null;
  const frac = m[3] ? m[3].slice(0, 4).padEnd(4, '0') : '';
  let zone = m[4] || 'Z';
  if (/^[+-]\d\d$/.test(zone)) zone += ':00';
  const d = new Date(`${m[1]}T${m[2]}${frac}${zone}`);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function jsonText(v, pretty) {
  if (v === null || v === undefined) return '';
  return pretty ? JSON.stringify(v, null, 2) : JSON.stringify(v);
}

// The latest point of a rate series, or null.
export function lastOf(a) {
  return Array.isArray(a) && a.length ? a[a.length - 1] : null;
}

// "a", "a" and "b", "a", "b" and "c": queue names in a sentence.
export function quotedList(names) {
  const quoted = names.map((n) => `"${n}"`);
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}` : quoted.join('');
}

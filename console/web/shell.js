// What every view shares: the session, the header's connection line, the
// status bar, and running an action (confirm, POST, say what happened).
import { api, errorText } from './api_client.js';

export const REFRESH_MS = 5000;

export const state = {
  session: null,
  timer: null,
  generation: 0, // bumped on every route change: late answers of an old view are dropped
};

export function setConn(text, isError) {
  const c = document.getElementById('conn');
  c.textContent = text;
  c.classList.toggle('conn-error', Boolean(isError));
}

export function showStatus(kind, text) {
  const box = document.getElementById('status');
  document.getElementById('status-text').textContent = text;
  box.dataset.kind = kind; // done | error | info
  box.className = `status status-${kind}`;
  box.hidden = false;
}

export function hideStatus() {
  const box = document.getElementById('status');
  box.hidden = true;
  document.getElementById('status-text').textContent = '';
  delete box.dataset.kind;
}

export async function loadSession() {
  const s = await api('/api/session');
  state.session = s;
  const who = document.getElementById('session');
  who.textContent = `${s.role}@${s.database}`;
  who.title = `PostgreSQL ${s.server_version}`;
  document.getElementById('readonly').hidden = Boolean(s.actions);
  document.body.classList.toggle('readonly', !s.actions);
  return s;
}

// What needs pgmq-cpp and the database's pgmq lacks (upstream pgmq has
// none of it): the session's features, false or missing.
export function hasFeature(key) {
  const f = state.session && state.session.features;
  return Boolean(f && f[key]);
}

// "not available with upstream pgmq 1.12.0"
export function notAvailableText() {
  const name = state.session && state.session.pgmq ? state.session.pgmq.name : 'this pgmq';
  return `not available with ${name}`;
}

// The features the page names when missing, in the session's words.
export const FEATURE_WORDS = [
  ['dead_letter_policies', 'dead-letter policies'],
  ['pause', 'pause'],
  ['priorities', 'priorities'],
  ['partition_runway', 'partition runway'],
  ['failure_reasons', 'failure reasons'],
  ['redrive', 'redrive'],
  ['streams', 'streams'],
];

export function missingFeatures() {
  return FEATURE_WORDS.filter(([key]) => !hasFeature(key)).map(([, words]) => words);
}

export function actionsOn() {
  return Boolean(state.session && state.session.actions);
}

// Every action: confirm, POST with the CSRF token, say what happened.
export async function runAction(question, path, body) {
  if (!window.confirm(question)) {
    showStatus('info', 'Cancelled: nothing was changed.');
    return false;
  }
  showStatus('info', 'Working…');
  try {
    const res = await api(path, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Pgmq-Console-Token': state.session ? state.session.csrf_token : '',
      },
      body: JSON.stringify(body || {}),
    });
    showStatus('done', res && res.done ? res.done : 'done');
    return true;
  } catch (e) {
    showStatus('error', `Failed: ${errorText(e)}`);
    return false;
  }
}

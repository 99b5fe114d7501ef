// pgmq console: the page. Vanilla JS modules, no build step, no external
// resources; each module is served by the console itself (script-src 'self').
//
// Rules (docs/console.md, the server's Content-Security-Policy):
// - no inline scripts, styles or event handlers: everything is wired with
//   addEventListener, and styled by class names from style.css;
// - message bodies, headers and queue names are user data: they reach the
//   page through textContent (dom.js's el()) and attribute values only,
//   never through innerHTML.
//
// Modules: dom.js and format.js (helpers), api_client.js (the JSON API),
// shell.js (session, status bar, actions), labels.js and sparkline.js
// (shared by the views), overview.js, queue_page.js and message_browser.js
// (the views), streams.js (a stream's consumer groups, in both views), and
// this file: the router.
//
// Routes: #/ the overview of every queue, #/queue/<encodeURIComponent(name)>
// one queue's page.
import { errorText } from './api_client.js';
import { clear, el } from './dom.js';
import { showOverview } from './overview.js';
import { showQueue } from './queue_page.js';
import { REFRESH_MS, hideStatus, loadSession, setConn, state } from './shell.js';

function route() {
  state.generation += 1;
  const gen = state.generation;
  window.clearTimeout(state.timer);
  const view = document.getElementById('view');
  clear(view);
  const hash = window.location.hash || '#/';
  const m = /^#\/queue\/(.+)$/.exec(hash);
  document.getElementById('nav-overview').classList.toggle('active', !m);
  if (m) {
    let name;
    try {
      name = decodeURIComponent(m[1]);
    } catch (e) {
      view.append(el('p', { class: 'error-line' }, 'Bad queue address.'));
      return;
    }
    document.title = `${name} · pgmq console`;
    view.dataset.view = 'queue';
    showQueue(view, gen, name);
  } else {
    document.title = 'Queues · pgmq console';
    view.dataset.view = 'overview';
    showOverview(view, gen);
  }
}

async function connect() {
  try {
    await loadSession();
  } catch (e) {
    document.getElementById('session').textContent = 'not connected';
    setConn(errorText(e), true);
    // Retry until the server answers: the views need the session's token.
    window.setTimeout(connect, REFRESH_MS);
    return;
  }
  route();
}

// A module runs after the document is parsed (modules are deferred).
document.getElementById('status-close').addEventListener('click', hideStatus);
window.addEventListener('hashchange', () => {
  hideStatus();
  if (state.session) route();
});
connect();

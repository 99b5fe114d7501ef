// The console's JSON API (docs/console.md#the-json-api).

export class ApiError extends Error {
  constructor(status, message, sqlstate) {
    super(message);
    this.status = status;
    this.sqlstate = sqlstate || null;
  }
}

export function apiQueue(name) {
  return `/api/queues/${encodeURIComponent(name)}`;
}

export async function api(path, options) {
  let res;
  try {
    res = await fetch(path, Object.assign({ credentials: 'same-origin', cache: 'no-store' }, options));
  } catch (e) {
    throw new ApiError(0, 'cannot reach the console server');
  }
  let body = null;
  try {
    body = await res.json();
  } catch (e) {
    body = null;
  }
  if (!res.ok) {
    const msg = body && typeof body.error === 'string' ? body.error : `HTTP ${res.status}`;
    throw new ApiError(res.status, msg, body && body.sqlstate);
  }
  return body;
}

export function errorText(e) {
  if (!(e instanceof ApiError)) return String(e && e.message ? e.message : e);
  let t = e.message;
  if (e.status === 503) t = `database unreachable: ${t}`;
  if (e.sqlstate) t += ` (SQLSTATE ${e.sqlstate})`;
  return t;
}

// The sessions list: GET /api/sessions with the form's filters (kept in
// the page's address, so a filtered list can be shared or reloaded), and
// refreshed every few seconds while the page is visible, so running
// sessions move on by themselves.
'use strict';

(() => {
  const form = document.getElementById('filters');
  const body = document.querySelector('#sessions tbody');
  const message = document.getElementById('message');
  const empty = document.getElementById('empty');
  const count = document.getElementById('count');
  const FIELDS = ['status', 'agent', 'q'];
  const REFRESH_MS = 5000;

  function filters() {
    const f = {};
    for (const name of FIELDS) f[name] = form.elements[name].value.trim();
    return f;
  }

  // the form from the address, as the page was opened
  const start = new URLSearchParams(location.search);
  for (const name of FIELDS)
    if (start.has(name)) form.elements[name].value = start.get(name);

  function row(s) {
    const link = aw.el('a', {href: aw.page('/sessions/' + encodeURIComponent(s.id)), class: 'session-id'},
                       s.id.length > 13 ? s.id.slice(0, 8) + '…' : s.id);
    link.title = s.id;
    const task = (s.task || '').replace(/\s+/g, ' ');
    return aw.el('tr', {'data-id': s.id},
                 aw.el('td', null, aw.statusBadge(s.status)),
                 aw.el('td', null, link, s.kind === 'chat' ? aw.el('span', {class: 'kind'}, ' chat') : null),
                 aw.el('td', null, s.agent || '-'),
                 aw.el('td', {class: 'when'}, aw.time(s.created_at)),
                 aw.el('td', {class: 'num'}, String(s.turns || 0)),
                 aw.el('td', {class: 'num', title: (s.usage ? s.usage.input_tokens + ' in, ' + s.usage.output_tokens + ' out' : '')},
                       aw.tokens(aw.totalTokens(s.usage))),
                 aw.el('td', {class: 'num'}, aw.cost(s.usage)),
                 aw.el('td', {class: 'task', title: task}, task.length > 90 ? task.slice(0, 89) + '…' : task));
  }

  let loading = false;
  async function load() {
    if (loading) return;
    loading = true;
    try {
      const data = await aw.getJSON(aw.api('/api/sessions', filters()));
      aw.clear(body);
      for (const s of data.sessions) body.appendChild(row(s));
      empty.hidden = data.sessions.length > 0;
      count.textContent = data.sessions.length === data.limit ? 'the newest ' + data.limit
                                                              : data.sessions.length + ' session' + (data.sessions.length === 1 ? '' : 's');
      aw.showMessage(message, '');
    } catch (e) {
      aw.showMessage(message, 'Could not list the sessions: ' + e.message);
    } finally {
      loading = false;
      document.body.dataset.loaded = '1';
    }
  }

  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filters()))
      if (v) q.set(k, v);
    if (aw.token) q.set('token', aw.token);
    history.replaceState(null, '', location.pathname + (q.toString() ? '?' + q : ''));
    load();
  });
  form.elements.status.addEventListener('change', () => form.requestSubmit());

  load();
  setInterval(() => {
    if (!document.hidden) load();
  }, REFRESH_MS);
})();

// One session's page. The session's row (GET /api/sessions/ID) gives the
// header, the totals and the final report; its envelopes (server-sent
// events from /api/sessions/ID/events, from the first one) give the steps
// and tool calls the timeline, the chart and the table are drawn from.
// The stream stays open, so a running session's page follows it: each
// envelope redraws, and a step's end or the status refreshes the row.
'use strict';

(() => {
  const id = decodeURIComponent(location.pathname.replace(/^\/sessions\//, ''));
  const $ = (x) => document.getElementById(x);
  const base = '/api/sessions/' + encodeURIComponent(id);

  const state = {
    session: null,
    steps: [],            // in step order
    byNumber: new Map(),
    current: null,        // the step tool envelopes belong to
    envelopes: 0,
    stream: null,
  };

  // ---- envelopes -> steps ----------------------------------------------------------------

  function stepOf(n) {
    let s = state.byNumber.get(n);
    if (!s) {
      s = {number: n, start: null, duration: null, usage: null, errors: 0, finish: null, tools: [], byId: new Map()};
      state.byNumber.set(n, s);
      state.steps.push(s);
      state.steps.sort((a, b) => a.number - b.number);
    }
    state.current = s;
    return s;
  }

  function apply(env) {
    const p = env.payload || {};
    const at = Date.parse(env.timestamp);
    switch (env.type) {
    case 'agent.step.started': {
      // a step begun again (a cut turn resumed) starts over
      const s = stepOf(p.step_number);
      Object.assign(s, {start: at, duration: null, usage: null, tools: [], byId: new Map()});
      break;
    }
    case 'agent.step.completed': {
      const s = stepOf(p.step_number);
      if (s.start === null) s.start = at - (p.duration_ms || 0);
      Object.assign(s, {duration: p.duration_ms || 0, usage: p.usage || null, errors: p.errors || 0,
                        finish: p.finish_reason});
      scheduleSession();
      break;
    }
    case 'agent.tool.started':
    case 'agent.tool.completed': {
      const s = state.current || stepOf(0);
      let t = p.tool_call_id ? s.byId.get(p.tool_call_id) : null;
      if (!t) {
        t = {id: p.tool_call_id, name: p.tool_name, start: at, duration: null, success: null, error: null,
             args: p.args_summary || '', result: null};
        s.tools.push(t);
        if (t.id) s.byId.set(t.id, t);
      }
      if (env.type === 'agent.tool.completed') {
        if (t.duration === null && t.start === at) t.start = at - (p.duration_ms || 0);
        Object.assign(t, {duration: p.duration_ms || 0, success: p.success !== false, error: p.error,
                          result: p.result_summary});
      }
      break;
    }
    case 'agent.status':
      scheduleSession();
      break;
    }
    state.envelopes++;
    scheduleDraw();
  }

  // ---- drawing --------------------------------------------------------------------------------

  let drawPending = false;
  function scheduleDraw() {
    if (drawPending) return;
    drawPending = true;
    setTimeout(() => {
      drawPending = false;
      draw();
    }, 50);
  }

  function running() {
    return state.session && state.session.status === 'running';
  }

  // While the run goes on, the store holds its finished steps only: the
  // step under way is shown as a running bar after the last one.
  function withStepUnderWay() {
    const last = state.steps[state.steps.length - 1];
    if (!running() || !last || last.duration === null) return state.steps;
    const next = {number: last.number + 1, start: last.start + last.duration, duration: null, usage: null, tools: [],
                  pending: true};
    return state.steps.concat([next]);
  }

  function draw() {
    charts.timeline($('timeline'), withStepUnderWay(), Date.now());
    charts.tokens($('chart'), state.steps);
    drawCalls();
    document.body.dataset.envelopes = String(state.envelopes);
    document.body.dataset.steps = String(state.steps.length);
  }

  function drawCalls() {
    const body = document.querySelector('#calls tbody');
    aw.clear(body);
    const t0 = state.steps.length && state.steps[0].start !== null ? state.steps[0].start : 0;
    for (const s of state.steps)
      for (const t of s.tools) {
        const outcome = t.duration === null ? aw.el('span', {class: 'badge badge-running'}, 'running')
                        : t.success ? aw.el('span', {class: 'badge badge-completed'}, 'ok')
                                    : aw.el('span', {class: 'badge badge-failed', title: t.error || ''}, 'failed');
        body.appendChild(aw.el('tr', {'data-call': t.id || ''},
                               aw.el('td', {class: 'num'}, String(s.number)),
                               aw.el('td', {class: 'mono'}, t.name || '?'),
                               aw.el('td', {class: 'num'}, t0 ? '+' + aw.duration(t.start - t0) : '-'),
                               aw.el('td', {class: 'num'}, t.duration === null ? '…' : aw.duration(t.duration)),
                               aw.el('td', null, outcome),
                               aw.el('td', null, aw.el('code', {class: 'args'}, t.args || '')),
                               aw.el('td', null, aw.el('code', {class: 'output'},
                                                       t.success === false ? t.error || '' : t.result || ''))));
      }
  }

  function fact(dl, name, value) {
    dl.appendChild(aw.el('div', {class: 'fact'}, aw.el('dt', null, name), aw.el('dd', null, value)));
  }

  function drawSession() {
    const s = state.session;
    document.title = (s.task ? s.task.slice(0, 60) : s.id) + ' · agentwire';
    aw.clear($('status'));
    $('status').appendChild(aw.statusBadge(s.status));
    $('title').textContent = s.id;
    $('task').textContent = s.task || '';
    const dl = $('facts');
    aw.clear(dl);
    const u = s.usage || {};
    fact(dl, 'agent', s.agent || '-');
    fact(dl, 'kind', s.kind + (s.parent_id ? ', under ' + s.parent_id : ''));
    fact(dl, 'started', aw.time(s.created_at));
    fact(dl, 'updated', aw.time(s.updated_at));
    fact(dl, 'turns', String(s.turns || 0));
    fact(dl, 'running time', aw.duration((s.seconds || 0) * 1000));
    fact(dl, 'tokens', (u.input_tokens || 0) + ' in, ' + (u.output_tokens || 0) + ' out');
    fact(dl, 'cost', aw.cost(u));
    const models = s.config && Array.isArray(s.config.models) ? s.config.models.join(', then ') : '';
    if (models) fact(dl, 'model', models);
    if (s.stop_reason) fact(dl, 'stop reason', s.stop_reason);
    $('dl-thread').setAttribute('href', aw.api(base + '/thread', {download: 1}));
    $('dl-accounting').setAttribute('href', aw.api(base + '/accounting', {download: 1}));
    $('live').hidden = !running();
    document.body.dataset.status = s.status;
    drawReport(s);
  }

  function drawReport(s) {
    const box = $('report');
    aw.clear(box);
    $('report-status').textContent = s.final_status ? '(' + s.final_status + ')' : '';
    if (typeof s.final_report !== 'string') {
      box.appendChild(aw.el('p', {class: 'empty'}, running() ? 'The run is still going.' : 'No report.'));
      return;
    }
    const format = s.config && s.config.format;
    if (format === 'json' || s.config && s.config.contract) {
      let text = s.final_report;
      try {
        text = JSON.stringify(JSON.parse(text), null, 2);
      } catch (e) {
        /* shown as it is */
      }
      box.appendChild(aw.el('pre', null, aw.el('code', null, text)));
    } else if (format === 'text' || format === 'pipe' || format === 'tty') {
      box.appendChild(aw.el('pre', {class: 'plain'}, s.final_report));
    } else {
      box.appendChild(markdown.render(s.final_report));
    }
  }

  // ---- the session row -------------------------------------------------------------------------

  let sessionTimer = null;
  function scheduleSession() {
    clearTimeout(sessionTimer);
    sessionTimer = setTimeout(loadSession, 100);
  }

  async function loadSession() {
    try {
      const view = await aw.getJSON(aw.api(base));
      state.session = view.session;
      drawSession();
      aw.showMessage($('message'), '');
      return true;
    } catch (e) {
      aw.showMessage($('message'), e.status === 404 ? 'There is no session ' + id + '.'
                                                   : 'Could not read the session: ' + e.message);
      return false;
    }
  }

  function follow() {
    const es = new EventSource(aw.api(base + '/events'));
    state.stream = es;
    es.onmessage = (e) => {
      try {
        apply(JSON.parse(e.data));
      } catch (err) {
        /* an envelope this page does not understand is skipped */
      }
    };
    es.onerror = () => {
      // EventSource reconnects by itself (sending Last-Event-ID); closed
      // means the server refused the stream
      if (es.readyState === EventSource.CLOSED) aw.showMessage($('message'), 'The event stream was closed.');
    };
  }

  $('home').setAttribute('href', aw.page('/'));
  loadSession().then((ok) => {
    if (ok) follow();
    document.body.dataset.loaded = '1';
  });
  // running calls grow with the clock
  setInterval(() => {
    if (running()) draw();
  }, 1000);
  window.addEventListener('resize', scheduleDraw);
})();

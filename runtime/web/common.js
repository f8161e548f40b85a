// agentwire serve: what both pages use. Every value from a session is
// put in the page as text (textContent, text nodes, attribute values the
// browser does not run), never as markup: a tool output holding <script>
// shows as those characters.
'use strict';

const aw = (() => {
  const params = new URLSearchParams(location.search);
  // A server on another address wants its token; the pages pass it on.
  const token = params.get('token');

  // An API URL with its query (and the token when there is one).
  function api(path, query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query || {}))
      if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
    if (token) q.set('token', token);
    const s = q.toString();
    return path + (s ? '?' + s : '');
  }

  // A page link, keeping the token.
  function page(path) {
    return token ? path + '?token=' + encodeURIComponent(token) : path;
  }

  async function getJSON(url) {
    const r = await fetch(url, {headers: {Accept: 'application/json'}, cache: 'no-store'});
    let body = null;
    try {
      body = await r.json();
    } catch (e) {
      body = null;
    }
    if (!r.ok) {
      const why = body && typeof body.error === 'string' ? body.error : r.status + ' ' + r.statusText;
      const err = new Error(why);
      err.status = r.status;
      throw err;
    }
    return body;
  }

  // el('td', {class: 'num', title: t}, child, 'text', ...): children that are
  // strings become text nodes; null and undefined are skipped.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    for (const c of children) append(e, c);
    return e;
  }

  const SVG_NS = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, ...children) {
    const e = document.createElementNS(SVG_NS, tag);
    setAttrs(e, attrs);
    for (const c of children) append(e, c);
    return e;
  }

  function setAttrs(e, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'href') e.setAttribute('href', safeHref(String(v)));
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }

  function append(parent, c) {
    if (c === undefined || c === null) return;
    if (Array.isArray(c)) {
      for (const x of c) append(parent, x);
      return;
    }
    parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }

  // Links go where links should: this server, http(s) and mail. Anything
  // else (javascript:, data:, vbscript:) becomes an inert '#'.
  function safeHref(href) {
    const h = href.trim();
    if (h.startsWith('/') && !h.startsWith('//')) return h;
    if (h.startsWith('#')) return h;
    try {
      const u = new URL(h, location.href);
      if (u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'mailto:') return u.href;
    } catch (e) {
      /* not a URL */
    }
    return '#';
  }

  function clear(e) {
    while (e.firstChild) e.removeChild(e.firstChild);
  }

  // ---- formatting ----------------------------------------------------------------
  function pad(n) {
    return String(n).padStart(2, '0');
  }

  function time(ms) {
    if (!ms) return '-';
    const d = new Date(ms);
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + pad(d.getHours()) + ':' +
           pad(d.getMinutes()) + ':' + pad(d.getSeconds());
  }

  function duration(ms) {
    if (ms === null || ms === undefined || isNaN(ms)) return '-';
    if (ms < 1000) return Math.round(ms) + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
    const m = Math.floor(ms / 60000);
    return m + ' min ' + Math.round((ms % 60000) / 1000) + ' s';
  }

  function tokens(n) {
    if (!n) return '0';
    if (n < 10000) return String(n);
    if (n < 1e6) return (n / 1000).toFixed(1) + 'k';
    return (n / 1e6).toFixed(2) + 'M';
  }

  function cost(usage) {
    return usage && typeof usage.cost_usd === 'number' ? '$' + usage.cost_usd.toFixed(4) : '-';
  }

  function totalTokens(usage) {
    return usage ? (usage.input_tokens || 0) + (usage.output_tokens || 0) : 0;
  }

  function statusBadge(status) {
    const known = ['running', 'completed', 'failed', 'interrupted'];
    const cls = known.includes(status) ? status : 'other';
    return el('span', {class: 'badge badge-' + cls}, status || '?');
  }

  function showMessage(node, text) {
    node.textContent = text;
    node.hidden = !text;
  }

  return {token, api, page, getJSON, el, svg, clear, time, duration, tokens, cost, totalTokens, statusBadge,
          showMessage, safeHref};
})();

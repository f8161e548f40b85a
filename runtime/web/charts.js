// The session page's two figures, drawn as SVG from the steps the page
// has put together (session.js):
//   timeline  one row per step (its span) and one lane per tool call: a
//             bar from the call's start for its duration, on a common time
//             axis from the session's first step; running calls reach "now"
//   tokens    input and output tokens per step, stacked bars
// Every label is a text node; tooltips are <title> elements.
'use strict';

const charts = (() => {
  const svg = aw.svg;

  // A tick spacing of 1, 2 or 5 times a power of ten giving at most n ticks.
  function niceStep(span, n) {
    const raw = span / Math.max(1, n);
    const p = Math.pow(10, Math.floor(Math.log10(raw || 1)));
    for (const m of [1, 2, 5, 10])
      if (p * m >= raw) return p * m;
    return p * 10;
  }

  function cut(s, n) {
    s = String(s || '');
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }

  function widthOf(container) {
    return Math.max(640, Math.floor(container.clientWidth || 0) || 900);
  }

  // ---- timeline ---------------------------------------------------------------------

  const LABEL_W = 170, AXIS_H = 30, STEP_H = 22, LANE_H = 18, PAD_R = 70;

  function timeline(container, steps, now) {
    aw.clear(container);
    if (!steps.length) {
      container.appendChild(aw.el('p', {class: 'empty'}, 'No step yet.'));
      return;
    }
    let t0 = Infinity, t1 = -Infinity;
    const endOf = (start, ms) => (ms === null || ms === undefined ? now : start + ms);
    for (const s of steps) {
      if (s.start !== null) {
        t0 = Math.min(t0, s.start);
        t1 = Math.max(t1, endOf(s.start, s.duration));
      }
      for (const t of s.tools) {
        t0 = Math.min(t0, t.start);
        t1 = Math.max(t1, endOf(t.start, t.duration));
      }
    }
    if (!isFinite(t0)) t0 = t1 = now;
    const span = Math.max(1, t1 - t0);
    const W = widthOf(container), plot = W - LABEL_W - PAD_R;
    const x = (t) => LABEL_W + ((t - t0) / span) * plot;
    const lanes = steps.reduce((n, s) => n + s.tools.length, 0);
    const H = AXIS_H + steps.length * (STEP_H + 6) + lanes * LANE_H + 10;
    const root = svg('svg', {width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', class: 'timeline-svg',
                            'aria-label': 'timeline of ' + steps.length + ' steps and ' + lanes + ' tool calls'});
    // the axis: seconds from the first step's start
    const tick = niceStep(span, Math.max(2, Math.floor(plot / 110)));
    const axis = svg('g', {class: 'axis'});
    axis.appendChild(svg('line', {x1: LABEL_W, x2: LABEL_W + plot, y1: AXIS_H - 6, y2: AXIS_H - 6}));
    for (let t = 0; t <= span + 0.5; t += tick) {
      const px = x(t0 + t);
      axis.appendChild(svg('line', {x1: px, x2: px, y1: AXIS_H - 10, y2: H, class: 'grid'}));
      axis.appendChild(svg('text', {x: px, y: AXIS_H - 14, 'text-anchor': 'middle'}, aw.duration(t)));
    }
    root.appendChild(axis);
    let y = AXIS_H;
    for (const s of steps) {
      const g = svg('g', {class: s.pending ? 'step pending' : 'step', 'data-step': s.number});
      const start = s.start !== null ? s.start : (s.tools[0] ? s.tools[0].start : t0);
      const done = s.duration !== null && s.duration !== undefined;
      const w = Math.max(2, x(endOf(start, s.duration)) - x(start));
      g.appendChild(svg('text', {x: 8, y: y + 15, class: 'label step-label'},
                        'step ' + s.number + (s.pending ? ' (under way)' : '')));
      const bar = svg('rect', {x: x(start), y: y + 3, width: w, height: STEP_H - 6, rx: 3,
                               class: 'bar-step' + (done ? '' : ' running')},
                      svg('title', null, 'step ' + s.number + ': ' + (done ? aw.duration(s.duration) : 'running') +
                                         (s.usage ? ', ' + s.usage.total + ' tokens' : '')));
      g.appendChild(bar);
      g.appendChild(svg('text', {x: x(start) + w + 6, y: y + 15, class: 'value'}, done ? aw.duration(s.duration) : '…'));
      y += STEP_H + 6;
      for (const t of s.tools) {
        const running = t.duration === null || t.duration === undefined;
        const tw = Math.max(2, x(endOf(t.start, t.duration)) - x(t.start));
        const cls = 'bar-tool' + (running ? ' running' : t.success === false ? ' failed' : '');
        g.appendChild(svg('text', {x: 20, y: y + 12, class: 'label tool-label'}, cut(t.name, 22)));
        g.appendChild(svg('rect', {x: x(t.start), y: y + 2, width: tw, height: LANE_H - 5, rx: 2, class: cls,
                                   'data-call': t.id || ''},
                          svg('title', null, t.name + ': ' + (running ? 'running' : aw.duration(t.duration) +
                                                              (t.success === false ? ', failed' : '')))));
        g.appendChild(svg('text', {x: x(t.start) + tw + 5, y: y + 12, class: 'value'},
                          running ? 'running' : aw.duration(t.duration)));
        y += LANE_H;
      }
      root.appendChild(g);
    }
    container.appendChild(root);
    container.dataset.steps = String(steps.length);
    container.dataset.tools = String(lanes);
  }

  // ---- tokens per step ------------------------------------------------------------------

  const CH_H = 220, CH_L = 64, CH_B = 34, CH_T = 26;

  function tokens(container, steps) {
    aw.clear(container);
    const done = steps.filter((s) => s.usage);
    if (!done.length) {
      container.appendChild(aw.el('p', {class: 'empty'}, 'No step yet.'));
      return;
    }
    const W = widthOf(container), plot = W - CH_L - 20, plotH = CH_H - CH_B - CH_T;
    const max = Math.max(1, ...done.map((s) => (s.usage.prompt || 0) + (s.usage.completion || 0)));
    const tick = niceStep(max, 4);
    const top = Math.ceil(max / tick) * tick;
    const y = (v) => CH_T + plotH - (v / top) * plotH;
    const root = svg('svg', {width: W, height: CH_H, viewBox: '0 0 ' + W + ' ' + CH_H, role: 'img',
                            class: 'tokens-svg', 'aria-label': 'tokens per step'});
    const axis = svg('g', {class: 'axis'});
    for (let v = 0; v <= top; v += tick) {
      axis.appendChild(svg('line', {x1: CH_L, x2: CH_L + plot, y1: y(v), y2: y(v), class: 'grid'}));
      axis.appendChild(svg('text', {x: CH_L - 8, y: y(v) + 4, 'text-anchor': 'end'}, aw.tokens(v)));
    }
    root.appendChild(axis);
    const slot = plot / done.length, bw = Math.max(3, Math.min(48, slot * 0.7));
    const every = Math.ceil(done.length / Math.max(1, Math.floor(plot / 36)));
    done.forEach((s, i) => {
      const input = s.usage.prompt || 0, output = s.usage.completion || 0;
      const bx = CH_L + i * slot + (slot - bw) / 2;
      const g = svg('g', {class: 'bar-tokens', 'data-step': s.number},
                    svg('title', null, 'step ' + s.number + ': ' + input + ' in, ' + output + ' out'));
      g.appendChild(svg('rect', {x: bx, y: y(input), width: bw, height: Math.max(0, y(0) - y(input)), class: 'bar-input'}));
      g.appendChild(svg('rect', {x: bx, y: y(input + output), width: bw, height: Math.max(0, y(input) - y(input + output)),
                                 class: 'bar-output'}));
      if (i % every === 0)
        g.appendChild(svg('text', {x: bx + bw / 2, y: CH_H - CH_B + 16, 'text-anchor': 'middle', class: 'label'},
                          String(s.number)));
      root.appendChild(g);
    });
    const legend = svg('g', {class: 'legend'});
    legend.appendChild(svg('rect', {x: CH_L, y: 6, width: 12, height: 12, class: 'bar-input'}));
    legend.appendChild(svg('text', {x: CH_L + 18, y: 16}, 'input'));
    legend.appendChild(svg('rect', {x: CH_L + 70, y: 6, width: 12, height: 12, class: 'bar-output'}));
    legend.appendChild(svg('text', {x: CH_L + 88, y: 16}, 'output'));
    legend.appendChild(svg('text', {x: CH_L + plot, y: CH_H - 4, 'text-anchor': 'end', class: 'label'}, 'step'));
    root.appendChild(legend);
    container.appendChild(root);
    container.dataset.bars = String(done.length);
  }

  return {timeline, tokens};
})();

// A small Markdown renderer for final reports, safe by construction: it
// builds DOM nodes (text nodes for every piece of the source), so nothing
// in a report is ever parsed as HTML. What it knows: headings, paragraphs,
// bulleted and numbered lists, fenced and indented code, block quotes,
// rules, `code`, *emphasis*, **strong**, [links](url) (http, https, mailto
// and this server's paths only) and backslash escapes. Anything else,
// raw HTML included, is shown as the text it is.
'use strict';

const markdown = (() => {
  const el = (tag, ...children) => aw.el(tag, null, ...children);

  // ---- inline ---------------------------------------------------------------------

  // The text from i up to the next unescaped `close`, or -1.
  function findClose(s, i, close) {
    for (let j = i; j <= s.length - close.length; j++) {
      if (s[j] === '\\') {
        j++;
        continue;
      }
      if (s.startsWith(close, j)) return j;
    }
    return -1;
  }

  const PUNCT = '\\`*_{}[]()#+-.!<>|~"\'';

  // Inline Markdown of s, appended to parent.
  function inline(s, parent) {
    let text = '';
    const flush = () => {
      if (text) parent.appendChild(document.createTextNode(text));
      text = '';
    };
    let i = 0;
    while (i < s.length) {
      const c = s[i];
      if (c === '\\' && i + 1 < s.length && PUNCT.includes(s[i + 1])) {
        text += s[i + 1];
        i += 2;
        continue;
      }
      if (c === '`') {
        let ticks = 1;
        while (s[i + ticks] === '`') ticks++;
        const fence = '`'.repeat(ticks);
        const end = s.indexOf(fence, i + ticks);
        if (end > i) {
          flush();
          parent.appendChild(el('code', s.slice(i + ticks, end).trim()));
          i = end + ticks;
          continue;
        }
      }
      if (c === '[') {
        const m = /^\[([^\]\n]*)\]\(\s*([^\s()]*)\s*\)/.exec(s.slice(i));
        if (m) {
          flush();
          const a = aw.el('a', {href: m[2], rel: 'noopener noreferrer nofollow', target: '_blank'});
          inline(m[1] || m[2], a);
          parent.appendChild(a);
          i += m[0].length;
          continue;
        }
      }
      if (c === '*' || c === '_') {
        const strong = s[i + 1] === c;
        const mark = strong ? c + c : c;
        const from = i + mark.length;
        // an opening mark is followed by text, not a space; `_` inside a
        // word (snake_case) is a letter
        const wordBefore = i > 0 && /\w/.test(s[i - 1]);
        if (from < s.length && !/\s/.test(s[from]) && !(c === '_' && wordBefore)) {
          const end = findClose(s, from, mark);
          if (end > from && !/\s/.test(s[end - 1])) {
            flush();
            const node = el(strong ? 'strong' : 'em');
            inline(s.slice(from, end), node);
            parent.appendChild(node);
            i = end + mark.length;
            continue;
          }
        }
      }
      text += c;
      i++;
    }
    flush();
  }

  // ---- blocks ---------------------------------------------------------------------

  const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
  const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
  const BULLET = /^(\s*)[-*+]\s+(.*)$/;
  const NUMBERED = /^(\s*)(\d{1,9})[.)]\s+(.*)$/;
  const QUOTE = /^\s{0,3}>\s?(.*)$/;
  const INDENTED = /^( {4}|\t)(.*)$/;

  function render(source) {
    const root = document.createDocumentFragment();
    const lines = String(source).replace(/\r\n?/g, '\n').split('\n');
    let i = 0;
    let para = [];
    const endPara = () => {
      if (!para.length) return;
      const p = el('p');
      inline(para.join(' '), p);
      root.appendChild(p);
      para = [];
    };
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if (!line.trim()) {
        endPara();
        i++;
      } else if ((m = FENCE.exec(line))) {
        endPara();
        const fence = m[1];
        const body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
        i++; /* the closing fence, or the end */
        root.appendChild(el('pre', el('code', body.join('\n'))));
      } else if ((m = HEADING.exec(line))) {
        endPara();
        // the page has its own h1 and h2: a report's # is an h3
        const h = el('h' + Math.min(6, m[1].length + 2));
        inline(m[2], h);
        root.appendChild(h);
        i++;
      } else if (RULE.test(line)) {
        endPara();
        root.appendChild(el('hr'));
        i++;
      } else if (QUOTE.test(line)) {
        endPara();
        const body = [];
        while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
          body.push(m[1]);
          i++;
        }
        const q = el('blockquote');
        q.appendChild(render(body.join('\n')));
        root.appendChild(q);
      } else if (BULLET.test(line) || NUMBERED.test(line)) {
        endPara();
        i = list(lines, i, root);
      } else if (!para.length && (m = INDENTED.exec(line))) {
        const body = [];
        while (i < lines.length && (INDENTED.test(lines[i]) || !lines[i].trim())) {
          const im = INDENTED.exec(lines[i]);
          body.push(im ? im[2] : '');
          i++;
        }
        while (body.length && !body[body.length - 1].trim()) body.pop();
        root.appendChild(el('pre', el('code', body.join('\n'))));
      } else {
        para.push(line.trim());
        i++;
      }
    }
    endPara();
    return root;
  }

  // A list from line i: its items (with their continuation lines and
  // nested lists, by indentation); returns the line after it.
  function list(lines, i, parent) {
    const first = BULLET.exec(lines[i]) || NUMBERED.exec(lines[i]);
    const ordered = !BULLET.test(lines[i]);
    const indent = first[1].length;
    const node = el(ordered ? 'ol' : 'ul');
    if (ordered && first[2] !== '1') node.setAttribute('start', String(parseInt(first[2], 10)));
    while (i < lines.length) {
      const m = ordered ? NUMBERED.exec(lines[i]) : BULLET.exec(lines[i]);
      if (!m || m[1].length !== indent) break;
      const item = [ordered ? m[3] : m[2]];
      i++;
      // continuation lines: indented deeper than the marker, until a blank
      // line or the next item
      const nested = [];
      while (i < lines.length && lines[i].trim() && !(BULLET.test(lines[i]) || NUMBERED.test(lines[i])) &&
             /^\s/.test(lines[i]))
        item.push(lines[i++].trim());
      while (i < lines.length && lines[i].trim()) {
        const sub = BULLET.exec(lines[i]) || NUMBERED.exec(lines[i]);
        if (!sub || sub[1].length <= indent) break;
        nested.push(lines[i++]);
      }
      const li = el('li');
      inline(item.join(' '), li);
      if (nested.length) li.appendChild(render(nested.map((l) => l.slice(indent + 1)).join('\n')));
      node.appendChild(li);
      if (i < lines.length && !lines[i].trim() && i + 1 < lines.length) {
        const next = ordered ? NUMBERED.exec(lines[i + 1]) : BULLET.exec(lines[i + 1]);
        if (next && next[1].length === indent) i++; /* a loose list goes on */
      }
    }
    parent.appendChild(node);
    return i;
  }

  return {render, inline};
})();

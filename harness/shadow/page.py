"""The live view's page: HTML, script and style, all served by ``live.py`` (nothing from the
network). The script fetches ``data.json`` every two seconds and builds the page with DOM
calls and ``textContent`` only: an answer's text is never read as markup."""

INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>harness shadow</title>
<link rel="stylesheet" href="app.css">
</head>
<body>
<header>
  <h1>harness shadow <span id="state" class="state">connecting</span></h1>
  <p id="roles" class="roles"></p>
</header>
<section id="counts" class="counts"></section>
<section>
  <h2>Differences by cause</h2>
  <p class="note">Each cause with its calls, where it was found and one example: the request,
  the primary's answer and the candidate's. Counted with the noise learned so far; the final
  report (Ctrl-C) judges again with the whole run's noise, so a count can only go down.</p>
  <div id="causes"></div>
</section>
<section>
  <h2>Not compared</h2>
  <div id="uncompared"></div>
</section>
<section>
  <h2>Not mirrored by choice</h2>
  <div id="skipped"></div>
</section>
<script src="app.js"></script>
</body>
</html>
"""

APP_JS = r"""'use strict';
const token = new URLSearchParams(location.search).get('token') || '';
const opened = new Set();  // causes whose example is open: kept open across refreshes
let first = true;  // the first cause's example opens by itself, once

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return node;
}

function duration(seconds) {
  seconds = Math.max(0, Math.round(seconds));
  const h = Math.floor(seconds / 3600), m = Math.floor(seconds / 60) % 60, s = seconds % 60;
  return (h ? h + ' h ' : '') + (h || m ? m + ' min ' : '') + s + ' s';
}

function count(label, value, kind) {
  return el('div', {class: 'count ' + (kind || '')}, el('b', {}, value), el('span', {}, label));
}

function body(message) {
  if (!message || !message.body) return '(no body)';
  if (message.body.text !== undefined) return message.body.text;
  return '(binary, ' + message.body.base64.length + ' base64 characters)';
}

function headers(message) {
  return (message.headers || []).map(([k, v]) => k + ': ' + v).join('\n');
}

function answer(title, exchange) {
  if (!exchange) return el('div', {class: 'answer'}, el('h4', {}, title), el('p', {}, 'no answer'));
  const r = exchange.response;
  const head = r ? 'HTTP ' + r.status + ' ' + (r.reason || '') : 'no answer';
  return el('div', {class: 'answer'}, el('h4', {}, title),
            el('pre', {class: 'head'}, head + '\n' + (r ? headers(r) : '')),
            el('pre', {class: 'body'}, r ? body(r) : ''));
}

function example(cause) {
  const ex = cause.example || {};
  const sent = (ex.primary || ex.candidate || {}).request;
  const request = sent ? sent.method + ' ' + sent.url : '';
  return el('div', {class: 'example'},
    el('p', {}, 'Example: call #' + ex.index + ' (' + ex.operation + ' x ' + ex.binding + ') ',
       el('code', {}, request)),
    sent && sent.body ? el('pre', {class: 'body request'}, body(sent)) : null,
    // the answers' own words, as each side gave them (credential headers redacted)
    el('div', {class: 'pair'}, answer('primary', ex.primary), answer('candidate', ex.candidate)));
}

function causeRow(cause) {
  const key = cause.verdict + '|' + cause.cause;
  const where = cause.pairs.map(p => p.operation + ' x ' + p.binding + ' (' + p.calls + ')')
    .join(', ');
  const details = el('details', {class: 'cause ' + cause.verdict.replace(' ', '-')},
    el('summary', {},
       el('span', {class: 'badge'}, cause.verdict === 'warning' ? 'warning'
         : cause.difference ? 'difference' : 'failure'),
       el('span', {class: 'calls'}, cause.calls + (cause.calls === 1 ? ' call' : ' calls')),
       el('span', {class: 'text'}, cause.cause),
       el('span', {class: 'rules'}, Object.keys(cause.rules).join(', '))),
    el('p', {class: 'where'}, where),
    example(cause));
  if (opened.has(key)) details.open = true;
  details.addEventListener('toggle', () => details.open ? opened.add(key) : opened.delete(key));
  return details;
}

function list(target, counts, empty) {
  const entries = Object.entries(counts);
  target.replaceChildren(entries.length
    ? el('ul', {}, ...entries.map(([why, n]) => el('li', {}, el('b', {}, n), ' ' + why)))
    : el('p', {class: 'none'}, empty));
}

function render(data) {
  const roles = data.roles;
  document.getElementById('roles').replaceChildren(
    'primary ', el('code', {}, roles.primary),
    // replaceChildren, unlike el(), would write a null out as the text "null"
    ...(roles.secondary ? [', secondary ', el('code', {}, roles.secondary)] : []),
    ', candidate ', el('code', {}, roles.candidate),
    ' \u2014 running for ' + duration(data.now - data.started));
  // as the console's DIFFERENCES counts them: a failure that is none (no answer) is not one
  const differing = data.causes.filter(c => c.verdict === 'failed' && c.difference).length;
  const uncompared = Object.values(data.not_compared).reduce((a, b) => a + b, 0);
  document.getElementById('counts').replaceChildren(
    count('calls through the proxy', data.seen),
    count('mirrored', data.mirrored),
    count('compared', data.compared),
    count('differing', data.differing, data.differing ? 'bad' : 'good'),
    count('causes of differences', differing, differing ? 'bad' : 'good'),
    count('not compared', uncompared, uncompared ? 'warn' : ''),
    count('waiting / in flight', data.waiting + ' / ' + data.in_flight),
    count('noise places learned', data.noise_places));
  if (first && data.causes.length) {
    opened.add(data.causes[0].verdict + '|' + data.causes[0].cause);
    first = false;
  }
  const causes = document.getElementById('causes');
  const nothing = data.compared ? 'No difference so far.' : 'Nothing compared yet.';
  causes.replaceChildren(...(data.causes.length ? data.causes.map(causeRow)
    : [el('p', {class: 'none'}, nothing)]));
  list(document.getElementById('uncompared'), data.not_compared,
       'Every mirrored call was compared.');
  list(document.getElementById('skipped'), data.skipped, 'Every call is mirrored.');
}

async function refresh() {
  const state = document.getElementById('state');
  try {
    const reply = await fetch('data.json?token=' + encodeURIComponent(token), {cache: 'no-store'});
    if (!reply.ok) throw new Error('HTTP ' + reply.status);
    render(await reply.json());
    state.textContent = 'live';
    state.className = 'state live';
  } catch (err) {
    state.textContent = 'stopped (' + err.message + ')';
    state.className = 'state stopped';
  }
}

refresh();
setInterval(refresh, 2000);
"""

APP_CSS = """
body { font-family: system-ui, sans-serif; margin: 0 2rem 2rem; color: #1b1f24; }
header { border-bottom: 1px solid #d0d7de; margin-bottom: 1rem; }
h1 { font-size: 1.4rem; margin: 1rem 0 0.2rem; }
h2 { font-size: 1.1rem; margin-top: 1.5rem; }
.roles { color: #57606a; margin: 0 0 0.8rem; }
.state { font-size: 0.8rem; padding: 0.1rem 0.5rem; border-radius: 1rem; background: #eaeef2;
         vertical-align: middle; }
.state.live { background: #dafbe1; color: #116329; }
.state.stopped { background: #fff8c5; color: #7d4e00; }
.counts { display: flex; flex-wrap: wrap; gap: 0.6rem; }
.count { border: 1px solid #d0d7de; border-radius: 6px; padding: 0.4rem 0.8rem; min-width: 7rem; }
.count b { display: block; font-size: 1.3rem; }
.count span { color: #57606a; font-size: 0.85rem; }
.count.bad b { color: #cf222e; }
.count.good b { color: #1a7f37; }
.count.warn b { color: #9a6700; }
.note, .none, .where { color: #57606a; font-size: 0.9rem; }
details.cause { border: 1px solid #d0d7de; border-radius: 6px; margin: 0.4rem 0;
                padding: 0.3rem 0.6rem; }
details.cause summary { cursor: pointer; display: flex; gap: 0.8rem; align-items: baseline; }
.badge { font-size: 0.75rem; border-radius: 1rem; padding: 0.05rem 0.5rem; color: #fff;
         background: #cf222e; white-space: nowrap; }
details.warning .badge { background: #9a6700; }
.calls { font-weight: 600; white-space: nowrap; }
.text { flex: 1; }
.rules { color: #57606a; font-size: 0.8rem; font-family: ui-monospace, monospace; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 0.6rem; }
.answer h4 { margin: 0.4rem 0; }
pre { background: #f6f8fa; border-radius: 4px; padding: 0.4rem; overflow: auto;
      max-height: 24rem; white-space: pre-wrap; word-break: break-all; font-size: 0.8rem; }
code { font-size: 0.85rem; }
"""

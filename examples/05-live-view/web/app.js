// The live view. The program streams every trace event (server-sent events,
// /events); this script applies them one at a time to a small model of each
// stage, redraws the columns, and lists them in the timeline. Pausing stops
// applying (events wait in `pending`), so "step" moves one change one stage.
'use strict';
const $ = (sel) => document.querySelector(sel);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

// The model: what each stage holds right now, as far as the trace tells.
const model = {
  api: { status: 'starting', lastRV: '', relists: 0 },
  fifo: new Map(),     // key → its queued deltas ("Added rv=5"), until popped
  cache: new Map(),    // key → resourceVersion held by the indexer
  handlers: new Map(), // handler name → notifications waiting in its buffer
  waiting: new Set(),  // workqueue keys waiting for a worker
  inflight: new Set(), // workqueue keys a worker holds
  requeues: 0,
  workers: 1,
};
let paused = false;
const pending = [];

// "update to audit, 3 waiting" → {call: "update", handler: "audit", waiting: 3}
function delivery(detail) {
  const m = /^(.*) to (\S+), (\d+) waiting$/.exec(detail || '');
  return m ? { call: m[1], handler: m[2], waiting: Number(m[3]) } : null;
}

// Which column an event belongs to, or null for the timeline only.
function column(e) {
  switch (e.stage) {
    case 'reflector': return 'apiserver';
    case 'listener': return 'handler-' + (delivery(e.detail)?.handler ?? e.detail.split(' ')[0]);
    case 'control': return e.kind === 'reconcile' ? 'workqueue' : null;
    default: return e.stage; // deltafifo, indexer, workqueue
  }
}

// apply changes the model for one event, the way that stage changed itself.
function apply(e) {
  const key = e.key;
  switch (e.stage + ':' + e.kind) {
    case 'reflector:list': model.api.status = `LIST answered at rv=${e.rv}`; model.api.lastRV = e.rv; break;
    case 'reflector:watch': model.api.status = `WATCH from rv=${e.rv}`; break;
    case 'reflector:watch-event': model.api.lastRV = e.rv; break;
    case 'reflector:watch-end': model.api.status = `watch ended (${e.detail})`; break;
    case 'reflector:relist': model.api.status = `RELIST: ${e.detail}`; model.api.relists++; break;
    case 'reflector:error': model.api.status = `error: ${e.detail}`; break;
    case 'deltafifo:queued':
      model.fifo.set(key, [...(model.fifo.get(key) || []), `${e.detail} rv=${e.rv}`]); break;
    case 'deltafifo:popped': model.fifo.delete(key); break;
    case 'indexer:stored': model.cache.set(key, e.rv); break;
    case 'indexer:deleted': model.cache.delete(key); break;
    case 'listener:delivered': {
      const d = delivery(e.detail);
      if (d) model.handlers.set(d.handler, d.waiting);
      break;
    }
    case 'workqueue:added': model.waiting.add(key); break;
    case 'workqueue:got': model.waiting.delete(key); model.inflight.add(key); break;
    case 'workqueue:done': model.inflight.delete(key); break;
    case 'workqueue:requeued': model.requeues++; break;
    case 'control:workers': model.workers = Number(/(\d+) workers/.exec(e.detail)[1]); break;
  }
  render();
  arrive(e);
  addRow(e);
}

// arrive flashes the event's column and adds a chip that slides in.
function arrive(e) {
  const col = document.getElementById(column(e));
  if (!col) return;
  col.classList.add('flash');
  setTimeout(() => col.classList.remove('flash'), 150);
  const li = document.createElement('li');
  li.dataset.key = e.key || '';
  li.className = e.kind;
  if (/final state unknown/.test(e.detail)) li.classList.add('unknown');
  const what = e.stage === 'listener' ? delivery(e.detail)?.call ?? e.kind : e.kind;
  li.textContent = [what, e.key, e.rv && 'rv=' + e.rv, e.stage === 'listener' ? '' : e.detail]
    .filter(Boolean).join(' ');
  const list = col.querySelector('ol.recent');
  list.prepend(li);
  while (list.children.length > 10) list.lastChild.remove();
}

// render redraws each column's summary and state from the model.
function render() {
  fill('apiserver', `${esc(model.api.status)}<br>last rv seen: ${model.api.lastRV || '–'} · relists: ${model.api.relists}`, []);
  fill('deltafifo', `${model.fifo.size} key(s) queued`, [...model.fifo].map(([k, ds]) => [k, `${k}: ${ds.join(', ')}`]));
  fill('indexer', `${model.cache.size} object(s) cached`, [...model.cache].map(([k, rv]) => [k, `${k} rv=${rv}`]));
  for (const [name, waiting] of model.handlers) {
    fill('handler-' + name, `buffer: ${waiting} waiting<div class="bar" style="width:${Math.min(100, waiting * 10)}%"></div>`, []);
  }
  fill('workqueue', `workers: ${model.workers} · requeues: ${model.requeues}`,
    [...[...model.waiting].map((k) => [k, `waiting ${k}`]), ...[...model.inflight].map((k) => [k, `in flight ${k}`, 'inflight'])]);
}

function fill(id, summary, items) {
  const col = document.getElementById(id);
  if (!col) return;
  col.querySelector('.summary').innerHTML = summary; // render escapes what came from the server
  col.querySelector('ul.state').replaceChildren(...items.map(([key, text, cls]) => {
    const li = document.createElement('li');
    li.dataset.key = key;
    li.textContent = text;
    if (cls) li.className = cls;
    return li;
  }));
}

function addRow(e) {
  const tr = document.createElement('tr');
  tr.className = e.stage;
  for (const [v, cls] of [[e.seq], [e.ms], [e.stage, 'stage'], [e.kind], [e.key], [e.rv], [e.detail]]) {
    const td = document.createElement('td');
    td.textContent = v ?? '';
    if (cls) td.className = cls;
    tr.append(td);
  }
  const body = $('#events');
  body.prepend(tr);
  while (body.children.length > 300) body.lastChild.remove();
}

function addHandlerColumn(name) {
  const col = document.createElement('div');
  col.className = 'col handler';
  col.id = 'handler-' + name;
  col.innerHTML = '<h2></h2><div class="summary"></div><ul class="state"></ul><ol class="recent"></ol>';
  col.querySelector('h2').textContent = 'handler ' + name;
  $('#pipeline').insertBefore(col, $('#workqueue'));
  model.handlers.set(name, 0);
}

// The timeline controls: pause keeps events in `pending`; step applies one.
function showPending() { $('#pending').textContent = paused ? `${pending.length} event(s) waiting` : ''; }
$('#pause').onclick = () => {
  paused = !paused;
  $('#pause').textContent = paused ? 'resume' : 'pause';
  $('#step').disabled = !paused;
  while (!paused && pending.length) apply(pending.shift());
  showPending();
};
$('#step').onclick = () => { if (pending.length) apply(pending.shift()); showPending(); };

// The page's buttons: each POSTs a form to one /api/ endpoint.
async function post(path, form) {
  const res = await fetch('/api/' + path, { method: 'POST', body: new URLSearchParams(form) });
  $('#problem').textContent = res.ok ? '' : `${path}: ${await res.text()}`; // no alert(): it would block the page
}
const name = () => ({ name: $('#name').value });
$('#create').onclick = () => post('create', name());
$('#update').onclick = () => post('update', name());
$('#delete').onclick = () => post('delete', name());
$('#slow').onclick = () => post('slow', { ms: $('#slow-ms').value });
$('#workers').onclick = () => post('workers', { n: $('#workers-n').value });
$('#cut').onclick = () => post('cut', {});
$('#reconnect').onclick = () => post('reconnect', {});
$('#compact').onclick = () => post('compact', {});

// duration writes ms as a person would read it: 500ms, 2s, 10min.
function duration(ms) {
  if (ms >= 60000 && ms % 60000 === 0) return `${ms / 60000}min`;
  if (ms >= 1000) return `${ms / 1000}s`;
  return `${ms}ms`;
}

async function start() {
  const cfg = await (await fetch('/api/config')).json();
  $('#ns').textContent = cfg.namespace;
  $('#compact').disabled = !cfg.compact;
  $('#fault-note').textContent = `"cut watch" cuts the informer's connection and refuses new ones for ${duration(cfg.outageMs)}, or until "end outage". ` +
    (cfg.compactNote || 'Cut, change something, then compact: the re-watch is answered 410 Gone.');
  model.workers = cfg.workers;
  $('#workers-n').value = cfg.workers;
  cfg.handlers.forEach(addHandlerColumn);
  render();
  const source = new EventSource('/events');
  source.onopen = () => { $('#conn').textContent = 'live'; $('#conn').className = 'live'; };
  source.onerror = () => { $('#conn').textContent = 'reconnecting…'; $('#conn').className = ''; };
  source.onmessage = (m) => {
    const e = JSON.parse(m.data);
    if (paused) { pending.push(e); showPending(); } else apply(e);
  };
}
start();

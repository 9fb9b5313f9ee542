#include "serve/assets.h"

#include "report/charts.h"

namespace kevo::serve {

namespace {

const char* kAppJs = R"JS('use strict';
// kevo serve: live updates from the JSON API (docs/SERVE.md). Text only: textContent, never HTML.
(function () {
  var body = document.body;
  if (!body) return;
  var page = body.getAttribute('data-page');
  var run = body.getAttribute('data-run');
  var version = Number(body.getAttribute('data-version'));

  function getJson(url) {
    return fetch(url, {credentials: 'same-origin', cache: 'no-store'}).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.json();
    });
  }
  function setLive(root, display) {
    var els = root.querySelectorAll('[data-live]');
    for (var i = 0; i < els.length; i++) {
      var key = els[i].getAttribute('data-live');
      if (display && Object.prototype.hasOwnProperty.call(display, key) && els[i].textContent !== String(display[key]))
        els[i].textContent = String(display[key]);
    }
  }
  function state(ok, running) {
    var e = document.getElementById('live');
    if (e) e.textContent = ok ? (running ? 'live' : 'up to date') : 'no connection';
    body.setAttribute('data-live-state', ok ? 'ok' : 'error');
  }
  function el(tag, text, href) {
    var e = document.createElement(tag);
    if (href) {
      var a = document.createElement('a');
      a.setAttribute('href', href);
      a.textContent = text;
      e.appendChild(a);
    } else {
      e.textContent = text;
    }
    return e;
  }
  function candidateRow(c) {
    var tr = document.createElement('tr');
    var ok = c.outcome === 'pass';
    tr.className = ok ? 'ok' : 'bad';
    var id = Number(c.id);
    tr.appendChild(el('td', '#' + id, '/runs/' + Number(run) + '/candidates/' + id));
    tr.appendChild(el('td', String(c.seq)));
    tr.appendChild(el('td', c.op));
    tr.appendChild(el('td', c.outcome + (c.reason ? ' [' + c.reason + ']' : '')));
    tr.appendChild(el('td', ok ? Number(c.speedup).toFixed(3) + 'x' + (c.accepted ? ' best' : '') : '-'));
    tr.appendChild(el('td', c.time_ms > 0 ? Number(c.time_ms).toPrecision(4) : '-'));
    tr.appendChild(el('td', c.name));
    tr.appendChild(el('td', c.model));
    return tr;
  }
  function fillLatest(doc) {
    var tbody = document.getElementById('latest-rows');
    if (!tbody) return;
    while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
    doc.candidates.forEach(function (c) { tbody.appendChild(candidateRow(c)); });
  }
  function reloadCharts(v) {
    var imgs = document.querySelectorAll('img[data-chart]');
    for (var i = 0; i < imgs.length; i++) imgs[i].setAttribute('src', imgs[i].getAttribute('data-chart') + '?v=' + v);
  }
  function later(fn, running) { setTimeout(fn, running ? 2000 : 10000); }

  function pollRun() {
    var running = true;
    getJson('/api/runs/' + Number(run)).then(function (s) {
      running = s.status === 'running';
      setLive(document, s.display);
      if (s.version === version) return null;
      version = s.version;
      body.setAttribute('data-version', String(version));
      reloadCharts(version);
      return getJson('/api/runs/' + Number(run) + '/candidates?limit=25').then(fillLatest);
    }).then(function () { state(true, running); }, function () { state(false, running); })
      .then(function () { later(pollRun, running); });
  }
  function runRow(r) {
    var tr = document.createElement('tr');
    tr.id = 'run-' + Number(r.id);
    tr.appendChild(el('td', String(Number(r.id)), '/runs/' + Number(r.id)));
    tr.appendChild(el('td', r.task));
    tr.appendChild(el('td', r.strategy + ' / ' + (r.llm || 'no model') + (r.fake ? ' (FAKE GPU)' : '')));
    ['status', 'candidates', 'validity', 'best', 'tokens', 'cost', 'elapsed'].forEach(function (k) {
      var td = el('td', '');
      td.setAttribute('data-live', k);
      tr.appendChild(td);
    });
    tr.appendChild(el('td', ''));
    return tr;
  }
  function pollRuns() {
    var running = false;
    getJson('/api/runs').then(function (doc) {
      var tbody = document.querySelector('#runs tbody');
      doc.runs.forEach(function (r) {
        running = running || r.status === 'running';
        var row = document.getElementById('run-' + Number(r.id));
        if (!row && tbody) {
          row = runRow(r);
          tbody.insertBefore(row, tbody.firstChild);
        }
        if (row) setLive(row, r.display);
      });
    }).then(function () { state(true, running); }, function () { state(false, running); })
      .then(function () { later(pollRuns, running); });
  }

  if (page === 'run') pollRun();
  else if (page === 'index') pollRuns();
})();
)JS";

const char* kServeCss = R"(
header{border-bottom:1px solid #ddd;padding:.3em 0;margin-bottom:1em}
header #live{float:right;font-size:12px}
.badge{font-size:14px;border:1px solid #999;border-radius:4px;padding:1px 6px;vertical-align:middle}
.cols{display:flex;flex-wrap:wrap;gap:2em}
table.kv th{text-align:left;font-weight:normal;color:#444}
img.chart{max-width:100%;border:1px solid #eee}
img[src*="best.svg"]{width:560px}
pre{background:#f7f7f7;border:1px solid #e3e3e3;padding:.6em;overflow-x:auto;white-space:pre-wrap;word-break:break-word;font-size:12px}
pre.source{max-height:none}
tr.bad td{color:#333}
tr.ok td:first-child{border-left:3px solid #31a354}
tr.bad td:first-child{border-left:3px solid #d62728}
p.verdict.ok{color:#207020} p.verdict.bad{color:#a01010}
ul.tree{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
ul.tree ul{border-left:1px dotted #aaa;margin-left:.6em;padding-left:1.2em}
svg.bar{vertical-align:middle}
span.detail{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
)";

}  // namespace

const std::string& app_js() {
  static const std::string s = kAppJs;
  return s;
}

const std::string& app_css() {
  static const std::string s = std::string(report::stylesheet()) + kServeCss;
  return s;
}

}  // namespace kevo::serve

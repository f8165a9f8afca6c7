// tileprof view, first of three scripts embed.cmake joins, in order, inside
// one function (so they share its scope): base.js, memory.js, program.js.
//
// tileprof view: draws the views of the page from the JSON data the page
// carries (<script id="tileprof-data">, made by analyzer/view_page.cc), or
// fetches from its data-src when `tileprof view --serve` serves the page.
// Plain browser JavaScript, no libraries and no network: the page must work
// from file:// on a machine with no access to anything. A view is drawn
// when first shown (a 94,208-tile report must open fast); <body
// data-ready="1"> is set once the page is up (the browser tests wait for
// it), and window.tileprofView tells them where to click.
//
// This file: the data, units, DOM, table and chart helpers, and the views
// registry.
  // The data: this is runView(DATA) (embed.cmake), called without it. It is
  // in the page, or served beside it (data-src): fetched, then runView again.
  var source = document.getElementById('tileprof-data');
  if (DATA === undefined && source.hasAttribute('data-src')) {
    fetch(source.getAttribute('data-src')).then(function (r) {
      if (!r.ok) throw new Error(r.status + ' ' + r.statusText);
      return r.json();
    }).then(runView, function (e) {
      document.body.appendChild(document.createTextNode('Could not load the report\'s data: ' + e));
      throw e;
    });
    return;
  }
  if (DATA === undefined) DATA = JSON.parse(source.textContent);
  var R = DATA.report, O = DATA.other || null;
  var SVG = 'http://www.w3.org/2000/svg';
  var COLOURS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
    '#ff9da7', '#9c755f', '#bab0ac', '#1f77b4', '#8c564b', '#17becf', '#bcbd22', '#7f7f7f',
    '#d62728', '#2ca02c', '#9467bd'];

  // ---- Units: the user's choice, kept between pages when storage allows.
  var UNITS = {bytes: [1, 'B'], kB: [1e3, 'kB'], KiB: [1024, 'KiB'], MB: [1e6, 'MB'], MiB: [1048576, 'MiB']};
  var unit = 'bytes';
  try { unit = localStorage.getItem('tileprof.unit') || 'bytes'; } catch (e) { /* file:// without storage */ }
  if (!UNITS[unit]) unit = 'bytes';
  function group(n) { return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function bytes(n) {
    if (n === null || n === undefined) return '-';
    var u = UNITS[unit];
    if (u[0] === 1) return group(n) + ' B';
    return (n / u[0]).toLocaleString('en-US', {maximumFractionDigits: 1, minimumFractionDigits: 1}) + ' ' + u[1];
  }
  function signedBytes(n) { return (n > 0 ? '+' : n < 0 ? '-' : '') + bytes(Math.abs(n)); }

  // ---- DOM helpers.
  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === 'text') e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return e;
  }
  function svgEl(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) { if (k === 'text') e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]); }
    return e;
  }
  function note(text) { return el('p', {'class': 'note', text: text}); }
  // A table of rows; cells are text or {v: number, t: text, cls}. Sortable by
  // clicking a heading.
  function table(columns, rows, id, rowAttrs) {
    var t = el('table', id ? {id: id} : {});
    var head = el('tr');
    columns.forEach(function (c, i) {
      var th = el('th', {text: c});
      th.addEventListener('click', function () { sortTable(t, i, th); });
      head.appendChild(th);
    });
    t.appendChild(el('thead', {}, [head]));
    var body = el('tbody');
    rows.forEach(function (r, index) {
      var tr = el('tr', rowAttrs ? rowAttrs(index) : {});
      r.forEach(function (c) {
        if (c !== null && typeof c === 'object') {
          var td = el('td', {'class': 'n' + (c.cls ? ' ' + c.cls : ''), 'data-v': c.v, text: c.t});
          tr.appendChild(td);
        } else {
          tr.appendChild(el('td', {'data-v': c === null ? '' : c, text: c === null ? '-' : String(c)}));
        }
      });
      body.appendChild(tr);
    });
    t.appendChild(body);
    return t;
  }
  function sortTable(t, col, th) {
    var desc = th.getAttribute('data-desc') !== '1';
    th.setAttribute('data-desc', desc ? '1' : '0');
    var body = t.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (isNaN(nx) || isNaN(ny)) ? String(x).localeCompare(String(y)) : nx - ny;
      return desc ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function num(v) { return {v: v, t: group(v)}; }
  function by(v) { return {v: v, t: bytes(v)}; }
  function delta(v, isBytes) {
    return {v: v, t: isBytes ? signedBytes(v) : (v > 0 ? '+' : '') + group(v), cls: 'delta ' + (v > 0 ? 'up' : v < 0 ? 'down' : '')};
  }
  // Which numbers of an analysis are bytes: by column name, unless the
  // caller knows better (a compare row's `measure` says what a and b are).
  function bytesByColumn(table, column) { return /bytes|gaps|over_by|saves|live|code|interleaved|overflowed/.test(column); }
  // The tables of an analysis's JSON (the `--format=json` of hist, oom,
  // top, compare): byte figures in the chosen unit, counts and cycles as
  // plain numbers.
  function analysisTables(json, titles, skip, isBytes) {
    isBytes = isBytes || function (table, column) { return bytesByColumn(table, column); };
    var out = el('div');
    if (!json || json.error) { out.appendChild(note('Not available: ' + (json ? json.error : 'no data'))); return out; }
    Object.keys(json).forEach(function (name) {
      if ((skip || []).indexOf(name) >= 0) return;
      var rows = json[name];
      out.appendChild(el('h3', {text: (titles && titles[name]) || name.replace(/_/g, ' ')}));
      if (!rows.length) { out.appendChild(note('(none)')); return; }
      var cols = Object.keys(rows[0]);
      out.appendChild(table(cols, rows.map(function (r) {
        return cols.map(function (c) {
          var v = r[c];
          if (typeof v !== 'number') return v;
          var b = isBytes(name, c, r);
          if (/delta/.test(c)) return delta(v, b);
          return b ? by(v) : num(v);
        });
      })));
    });
    return out;
  }

  // ---- Derived figures.
  function sum(a) { var s = 0; for (var i = 0; i < a.length; i++) s += a[i]; return s; }
  function maxIndex(a) { var m = 0; for (var i = 1; i < a.length; i++) if (a[i] > a[m]) m = i; return m; }
  function tileCount(d) { return d.tiles ? d.tiles.excludingGaps.length : 0; }
  function capacity(d) { return d.target ? d.target.bytesPerTile : null; }
  function outOfMemory(d) {
    if (d.oom && d.oom.summary && d.oom.summary.length) return d.oom.summary[0].tiles_out_of_memory;
    if (!d.tiles || !capacity(d)) return null;
    return d.tiles.excludingGaps.filter(function (b) { return b > capacity(d); }).length;
  }
  // The vertices of the compute set a program executes (undefined for
  // programs that execute none).
  function programVertices(p) {
    var set = p.computeSet !== undefined ? R.computeSets[p.computeSet] : undefined;
    return set ? set[1] : undefined;
  }
  function peakLiveness(d) {
    var l = d.liveness.notAlwaysLive;
    if (!l.length) return null;
    var i = maxIndex(l);
    return {step: i, bytes: l[i]};
  }
  function summaryRows(d) {
    var rows = [];
    function add(name, v, kind) { rows.push([name, v === null || v === undefined ? null : kind === 'n' ? num(v) : kind === 'b' ? by(v) : v]); }
    add('report', d.path);
    if (d.target) {
      add('architecture', d.target.arch);
      add('IPUs', d.target.numIpus, 'n');
      add('tiles', d.target.totalTiles, 'n');
      add('memory per tile', d.target.bytesPerTile, 'b');
      add('total memory', d.target.totalMemory, 'b');
    }
    if (d.graph) {
      add('vertices', d.graph.numVertices, 'n');
      add('edges', d.graph.numEdges, 'n');
      add('variables', d.graph.numVariables, 'n');
      add('compute sets', d.graph.numComputeSets, 'n');
    }
    if (d.total) {
      add('total, excluding gaps', d.total.excludingGaps, 'b');
      add('total, including gaps', d.total.includingGaps, 'b');
    }
    if (d.tiles) {
      var m = maxIndex(d.tiles.excludingGaps);
      add('largest tile', d.tiles.excludingGaps[m], 'b');
      add('largest tile is', 'tile ' + m);
      add('always-live, all tiles', sum(d.tiles.alwaysLive), 'b');
    }
    add('tiles out of memory', outOfMemory(d), 'n');
    var peak = peakLiveness(d);
    if (peak) add('peak not-always-live (step ' + peak.step + ')', peak.bytes, 'b');
    if (d.execution) add('total cycles', d.execution.totalCycles, 'n');
    return rows;
  }

  // ---- Charts.
  // Axis ticks: about `n` round values from 0 to max.
  function ticks(max, n) {
    if (!(max > 0)) return [0];
    var step = Math.pow(10, Math.floor(Math.log10(max / n)));
    [1, 2, 5, 10].some(function (m) { if (max / (step * m) <= n) { step *= m; return true; } return false; });
    var out = [];
    for (var v = 0; v <= max * 1.0001; v += step) out.push(v);
    return out;
  }
  // Draws y axis labels (bytes unless `yFormat` says) and grid lines on a
  // canvas context.
  function canvasAxes(ctx, box, maxY, xLabel, xMax, yFormat) {
    ctx.strokeStyle = '#ccc'; ctx.fillStyle = '#333'; ctx.font = '11px sans-serif';
    ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
    ticks(maxY, 5).forEach(function (v) {
      var y = box.y + box.h - v / maxY * box.h;
      ctx.beginPath(); ctx.moveTo(box.x, y); ctx.lineTo(box.x + box.w, y); ctx.stroke();
      ctx.fillText((yFormat || bytes)(v), box.x - 4, y);
    });
    ctx.textAlign = 'center'; ctx.textBaseline = 'top';
    ticks(xMax, 8).forEach(function (v) {
      var x = box.x + v / Math.max(xMax, 1) * box.w;
      ctx.fillText(group(v), x, box.y + box.h + 4);
    });
    ctx.fillText(xLabel, box.x + box.w / 2, box.y + box.h + 20);
  }
  function makeCanvas(w, h, id) {
    var c = el('canvas', {id: id, width: w, height: h});
    c.style.width = w + 'px'; c.style.height = h + 'px';
    return c;
  }

  // ---- Views.
  var views = [];
  var nav = el('nav');
  var main = el('main');
  function addView(name, title, draw) {
    var section = el('section', {id: 'view-' + name, hidden: ''});
    section.appendChild(el('h2', {text: title}));
    var button = el('button', {'data-view': name, 'aria-selected': 'false', text: title});
    button.addEventListener('click', function () { show(name); });
    nav.appendChild(button);
    main.appendChild(section);
    views.push({name: name, section: section, button: button, draw: draw, drawn: false});
  }
  function show(name) {
    views.forEach(function (v) {
      var on = v.name === name;
      v.button.setAttribute('aria-selected', on ? 'true' : 'false');
      if (on) v.section.removeAttribute('hidden'); else v.section.setAttribute('hidden', '');
      if (on && !v.drawn) { v.draw(v.section); v.drawn = true; }
    });
    try { history.replaceState(null, '', '#' + name); } catch (e) { /* file:// in some browsers */ }
  }
  function redrawAll() {
    var current = views.filter(function (v) { return !v.section.hasAttribute('hidden'); })[0];
    views.forEach(function (v) {
      while (v.section.childNodes.length > 1) v.section.removeChild(v.section.lastChild);
      v.drawn = false;
    });
    if (current) show(current.name);
  }

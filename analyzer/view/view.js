// tileprof view: draws the views of the page from the JSON data the page
// carries (<script id="tileprof-data">, made by analyzer/view_page.cc).
// Plain browser JavaScript, no libraries and no network: the page must work
// from file:// on a machine with no access to anything. A view is drawn
// when first shown (a 94,208-tile report must open fast); <body
// data-ready="1"> is set once the page is up (the browser tests wait for
// it), and window.tileprofView tells them where to click.
(function () {
  'use strict';
  var DATA = JSON.parse(document.getElementById('tileprof-data').textContent);
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
  // Draws y axis labels and grid lines on a canvas context.
  function canvasAxes(ctx, box, maxY, xLabel, xMax) {
    ctx.strokeStyle = '#ccc'; ctx.fillStyle = '#333'; ctx.font = '11px sans-serif';
    ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
    ticks(maxY, 5).forEach(function (v) {
      var y = box.y + box.h - v / maxY * box.h;
      ctx.beginPath(); ctx.moveTo(box.x, y); ctx.lineTo(box.x + box.w, y); ctx.stroke();
      ctx.fillText(bytes(v), box.x - 4, y);
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

  // Summary: the headline figures (both reports' when comparing).
  addView('summary', 'Summary', function (s) {
    var a = summaryRows(R);
    if (O) {
      var b = summaryRows(O);
      var names = {};
      b.forEach(function (r) { names[r[0]] = r[1]; });
      s.appendChild(table(['measure', 'report', 'compared with'], a.map(function (r) {
        return [r[0], r[1], names.hasOwnProperty(r[0]) ? names[r[0]] : null];
      }), 'summary'));
    } else {
      s.appendChild(table(['measure', 'value'], a, 'summary'));
    }
    if (R.total && R.total.categories.length) {
      s.appendChild(el('h3', {text: 'By category (excluding gaps)'}));
      var cats = R.total.categories.filter(function (c) { return c[1] > 0; });
      s.appendChild(table(['category', 'bytes', 'share'], cats.map(function (c) {
        var share = R.total.excludingGaps ? c[1] / R.total.excludingGaps : 0;
        return [c[0], by(c[1]), {v: share, t: (share * 100).toFixed(1) + ' %'}];
      })));
    }
  });

  // Insights: does it fit, the worst tiles, the histogram, what would help.
  addView('insights', 'Insights', function (s) {
    var oom = outOfMemory(R);
    var fits = oom === 0;
    s.appendChild(el('p', {}, [el('span', {'class': 'badge ' + (fits ? 'ok' : 'bad'), id: 'fit-verdict',
      text: oom === null ? 'Capacity unknown' : fits ? 'Fits: no tile is out of memory'
        : 'Does not fit: ' + group(oom) + ' tiles out of memory'})]));
    var hist = R.histogram && R.histogram.histogram;
    if (hist && hist.length) {
      s.appendChild(el('h3', {text: 'Tiles by memory used (excluding gaps)'}));
      s.appendChild(histogramSvg(hist));
    }
    s.appendChild(analysisTables(R.oom, {
      summary: 'Out-of-memory summary', tiles: 'The worst tiles', categories: 'Their categories',
      vertex_types: 'Their vertex types', variables: 'Their largest variables', tensors: 'Largest tensors',
      suggestions: 'Recommendations (estimated bytes saved on the tile)'}, ['tensors']));
  });
  function histogramSvg(rows) {
    var W = 900, H = 220, x0 = 50, y0 = 10, w = W - 70, h = H - 50;
    var s = svgEl('svg', {width: W, height: H, id: 'histogram', role: 'img'});
    var max = Math.max.apply(null, rows.map(function (r) { return r.tiles; }));
    var bw = w / rows.length;
    ticks(max, 4).forEach(function (v) {
      var y = y0 + h - v / Math.max(max, 1) * h;
      s.appendChild(svgEl('line', {x1: x0, x2: x0 + w, y1: y, y2: y, stroke: '#ddd'}));
      s.appendChild(svgEl('text', {x: x0 - 4, y: y + 4, 'text-anchor': 'end', text: group(v)}));
    });
    rows.forEach(function (r, i) {
      var bh = r.tiles / Math.max(max, 1) * h;
      var rect = svgEl('rect', {x: x0 + i * bw, y: y0 + h - bh, width: Math.max(bw - 1, 1), height: bh, fill: '#4e79a7'});
      rect.appendChild(svgEl('title', {text: r.lo_kb + '-' + r.hi_kb + ' KB: ' + r.tiles + ' tiles'}));
      s.appendChild(rect);
    });
    var step = Math.max(1, Math.ceil(rows.length / 10));
    for (var i = 0; i < rows.length; i += step)
      s.appendChild(svgEl('text', {x: x0 + i * bw, y: y0 + h + 14, text: rows[i].lo_kb}));
    s.appendChild(svgEl('text', {x: x0 + w / 2, y: H - 8, 'text-anchor': 'middle', text: 'KB per tile (bucket start)'}));
    s.appendChild(svgEl('text', {x: 12, y: y0 + h / 2, transform: 'rotate(-90 12 ' + (y0 + h / 2) + ')', 'text-anchor': 'middle', text: 'tiles'}));
    return s;
  }

  // Memory: per tile stacked by category with the capacity line, the tile
  // map, and a tile's breakdown when one is clicked.
  var memory = {stack: 'category'};
  // The series a tile's bar is stacked from: its categories, its memory
  // regions, or always-live and not-always-live bytes (all excluding gaps).
  function stackSeries(mode) {
    if (mode === 'region') return R.tiles.regions.filter(function (r) { return r.bytes.some(function (b) { return b > 0; }); });
    if (mode === 'liveness') return [{name: 'always-live', bytes: R.tiles.alwaysLive}, {name: 'not-always-live (peak)', bytes: R.tiles.notAlwaysLive}];
    return R.tiles.categories;
  }
  addView('memory', 'Memory', function (s) {
    if (!R.tiles) { s.appendChild(note('The report has no per-tile data (a text report prints only its most used tiles): see Summary and Insights.')); return; }
    var n = tileCount(R), cats = stackSeries(memory.stack), cap = capacity(R);
    var legend = el('div', {'class': 'legend'});
    cats.forEach(function (c, i) { legend.appendChild(el('span', {}, [el('i', {style: 'background:' + COLOURS[i % COLOURS.length]}), c.name])); });
    if (cap) legend.appendChild(el('span', {}, [el('i', {style: 'background:#000;height:2px'}), 'memory per tile (' + bytes(cap) + ')']));
    var stack = el('select', {id: 'memory-stack'});
    [['category', 'category'], ['region', 'memory region'], ['liveness', 'liveness']].forEach(function (m) {
      var o = el('option', {value: m[0], text: m[1]});
      if (m[0] === memory.stack) o.selected = true;
      stack.appendChild(o);
    });
    stack.addEventListener('change', function () { memory.stack = stack.value; redrawAll(); });
    s.appendChild(el('h3', {}, ['Memory per tile by ', stack, ' (excluding gaps; click a tile)']));
    s.appendChild(legend);
    // One column per tile, or per group of tiles drawn as its fullest tile.
    var W = 1100, H = 300, box = {x: 80, y: 10, w: W - 100, h: H - 50};
    var columns = Math.min(n, box.w), per = n / columns;
    var chart = makeCanvas(W, H, 'tile-chart');
    var ctx = chart.getContext('2d');
    // The capacity line is drawn when it is near the data; a report using a
    // small share of each tile would otherwise be a flat line at the bottom.
    var fullest = Math.max.apply(null, R.tiles.excludingGaps);
    var showCap = cap && fullest * 4 >= cap;
    var maxY = Math.max(fullest * (showCap ? 1 : 1.1), showCap ? cap : 0, 1);
    canvasAxes(ctx, box, maxY, 'tile', n);
    var shown = [];
    for (var col = 0; col < columns; col++) {
      var first = Math.floor(col * per), last = Math.max(first + 1, Math.floor((col + 1) * per));
      var t = first;
      for (var k = first; k < last; k++) if (R.tiles.excludingGaps[k] > R.tiles.excludingGaps[t]) t = k;
      shown.push(t);
      var y = box.y + box.h, cw = box.w / columns;
      cats.forEach(function (c, i) {
        var bh = c.bytes[t] / maxY * box.h;
        if (bh <= 0) return;
        ctx.fillStyle = COLOURS[i % COLOURS.length];
        ctx.fillRect(box.x + col * cw, y - bh, Math.max(cw - (cw > 3 ? 0.5 : 0), 0.6), bh);
        y -= bh;
      });
    }
    if (showCap) {
      var cy = box.y + box.h - cap / maxY * box.h;
      ctx.strokeStyle = '#000'; ctx.lineWidth = 1.5; ctx.setLineDash([6, 3]);
      ctx.beginPath(); ctx.moveTo(box.x, cy); ctx.lineTo(box.x + box.w, cy); ctx.stroke(); ctx.setLineDash([]);
    }
    chart.addEventListener('click', function (e) {
      var r = chart.getBoundingClientRect();
      var col = Math.floor((e.clientX - r.left - box.x) / (box.w / columns));
      if (col >= 0 && col < columns) selectTile(shown[col]);
    });
    s.appendChild(chart);
    if (cap && !showCap) s.appendChild(note('The fullest tile uses ' + (fullest / cap * 100).toFixed(1) + ' % of the ' + bytes(cap) + ' of a tile: the chart is scaled to the data, the capacity line is above it.'));
    if (per > 1) s.appendChild(note('Each column is ' + per.toFixed(1) + ' tiles, drawn as the fullest of them.'));
    s.appendChild(el('h3', {text: 'Tile map (colour: share of the tile\'s memory used; click a tile)'}));
    s.appendChild(tileMap());
    var detail = el('div', {id: 'tile-detail', 'class': 'panel'}, [note('Click a tile in the chart or the map for its breakdown.')]);
    s.appendChild(detail);
    memory.detail = detail;
  });
  function tileMap() {
    var n = tileCount(R), perIpu = (R.target && R.target.tilesPerIpu) || n, ipus = Math.ceil(n / perIpu);
    // Each IPU a block of columns, as the chip's tiles are; blocks in rows.
    var cols = Math.ceil(Math.sqrt(perIpu * 2)), rows = Math.ceil(perIpu / cols);
    var blocksPerRow = Math.max(1, Math.min(ipus, Math.floor(1100 / (cols * 2 + 8))));
    var cell = Math.max(2, Math.min(10, Math.floor(1100 / (blocksPerRow * (cols + 2)))));
    var blockW = (cols + 2) * cell, blockH = (rows + 3) * cell;
    var W = blocksPerRow * blockW, H = Math.ceil(ipus / blocksPerRow) * blockH;
    var canvas = makeCanvas(Math.max(W, 200), Math.max(H, 40), 'tile-map');
    var ctx = canvas.getContext('2d'), cap = capacity(R) || Math.max.apply(null, R.tiles.excludingGaps);
    function place(t) {
      var ipu = Math.floor(t / perIpu), i = t % perIpu;
      return {x: (ipu % blocksPerRow) * blockW + cell + Math.floor(i / rows) * cell,
        y: Math.floor(ipu / blocksPerRow) * blockH + 2 * cell + (i % rows) * cell};
    }
    ctx.fillStyle = '#333'; ctx.font = '11px sans-serif';
    for (var ipu = 0; ipu < ipus; ipu++) {
      ctx.fillText('IPU ' + ipu, (ipu % blocksPerRow) * blockW + cell, Math.floor(ipu / blocksPerRow) * blockH + 1.6 * cell);
    }
    for (var t = 0; t < n; t++) {
      var f = R.tiles.excludingGaps[t] / cap, p = place(t);
      ctx.fillStyle = f > 1 ? '#7f0000' : 'hsl(' + Math.round(120 - 120 * f) + ',70%,' + (f === 0 ? 92 : 50) + '%)';
      ctx.fillRect(p.x, p.y, cell - (cell > 3 ? 1 : 0), cell - (cell > 3 ? 1 : 0));
    }
    canvas.addEventListener('click', function (e) {
      var r = canvas.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
      var bx = Math.floor(x / blockW), by = Math.floor(y / blockH);
      var ipu = by * blocksPerRow + bx;
      var cx = Math.floor((x - bx * blockW - cell) / cell), cy = Math.floor((y - by * blockH - 2 * cell) / cell);
      if (bx >= blocksPerRow || cx < 0 || cy < 0 || cy >= rows || cx >= cols) return;
      var tile = ipu * perIpu + cx * rows + cy;
      if (tile < n && cx * rows + cy < perIpu) selectTile(tile);
    });
    memory.place = function (t) {
      var p = place(t), r = canvas.getBoundingClientRect();
      window.scrollBy(0, r.top + p.y - window.innerHeight / 2);  // into view, to be clicked
      r = canvas.getBoundingClientRect();
      return {x: r.left + p.x + cell / 2, y: r.top + p.y + cell / 2};
    };
    return canvas;
  }
  function selectTile(t) {
    var d = memory.detail;
    while (d.firstChild) d.removeChild(d.firstChild);
    var perIpu = (R.target && R.target.tilesPerIpu) || tileCount(R);
    d.setAttribute('data-tile', t);
    d.appendChild(el('h3', {text: 'Tile ' + t + ' (IPU ' + Math.floor(t / perIpu) + ')'}));
    var cap = capacity(R);
    var rows = [['excluding gaps', by(R.tiles.excludingGaps[t])], ['including gaps', by(R.tiles.includingGaps[t])],
      ['always-live', by(R.tiles.alwaysLive[t])], ['not-always-live (peak)', by(R.tiles.notAlwaysLive[t])]];
    R.tiles.regions.forEach(function (r) { if (r.bytes[t] > 0) rows.push([r.name + ' (excluding gaps)', by(r.bytes[t])]); });
    if (cap) rows.push(['free (excluding gaps)', {v: cap - R.tiles.excludingGaps[t], t: signedBytes(cap - R.tiles.excludingGaps[t])}]);
    var row = el('div', {'class': 'row'});
    row.appendChild(table(['measure', 'bytes'], rows));
    row.appendChild(table(['category', 'bytes'], R.tiles.categories.filter(function (c) { return c.bytes[t] > 0; })
      .map(function (c) { return [c.name, by(c.bytes[t])]; })));
    d.appendChild(row);
    var vars = R.variables.filter(function (v) { return v[0] === t; });
    d.appendChild(el('h3', {text: 'Largest variables on the tile'}));
    if (vars.length) {
      d.appendChild(table(['variable', 'bytes', 'category', 'always-live'], vars.map(function (v) {
        return [v[1], by(v[2]), v[3], v[4] ? 'yes' : 'no'];
      })));
    } else {
      d.appendChild(note(R.variables.length ? 'Variables are listed for the ' + group(R.variablesTiles) +
        ' most used tiles only; this is not one of them.' : 'The report lists no variables.'));
    }
  }

  // Liveness: live bytes at every program step; click a step for its details.
  var liveness = {};
  addView('liveness', 'Liveness', function (s) {
    var l = R.liveness, steps = l.notAlwaysLive.length;
    if (!steps) { s.appendChild(note('The report has no liveness per program step (a text report, or a file written before tileprof reported it).')); return; }
    var peak = peakLiveness(R), always = l.alwaysLive || 0;
    s.appendChild(el('p', {}, ['Peak not-always-live memory: ', el('b', {id: 'liveness-peak', 'data-bytes': peak.bytes, text: bytes(peak.bytes)}),
      ' at step ' + group(peak.step) + ' of ' + group(steps) + '; always-live memory (all tiles): ' + bytes(always) + '.']));
    var legend = el('div', {'class': 'legend'}, [el('span', {}, [el('i', {style: 'background:#4e79a7'}), 'not-always-live']),
      el('span', {}, [el('i', {style: 'background:#bab0ac'}), 'always-live'])]);
    s.appendChild(legend);
    var W = 1100, H = 320, box = {x: 80, y: 10, w: W - 100, h: H - 50};
    var canvas = makeCanvas(W, H, 'liveness-chart'), ctx = canvas.getContext('2d');
    var maxY = Math.max(peak.bytes + always, 1);
    if (O && O.liveness.notAlwaysLive.length)
      maxY = Math.max(maxY, peakLiveness(O).bytes + (O.liveness.alwaysLive || 0));
    canvasAxes(ctx, box, maxY, 'program step', steps);
    var ay = box.y + box.h - always / maxY * box.h;
    ctx.fillStyle = '#bab0ac'; ctx.fillRect(box.x, ay, box.w, box.y + box.h - ay);
    var columns = Math.min(steps, Math.floor(box.w)), per = steps / columns, cw = box.w / columns;
    stepBars(ctx, box, l.notAlwaysLive, always, maxY, '#4e79a7');
    if (O && O.liveness.notAlwaysLive.length) compareLiveness(s, legend, ctx, box, maxY);
    function stepAt(x) {
      var c = Math.floor((x - box.x) / cw);
      if (c < 0 || c >= columns) return null;
      var first = Math.floor(c * per), last = Math.max(first + 1, Math.floor((c + 1) * per)), best = first;
      for (var k = first; k < last; k++) if (l.notAlwaysLive[k] > l.notAlwaysLive[best]) best = k;
      return best;
    }
    canvas.addEventListener('click', function (e) {
      var i = stepAt(e.clientX - canvas.getBoundingClientRect().left);
      if (i !== null) selectStep(i);
    });
    liveness.point = function (i) {
      canvas.scrollIntoView();
      var r = canvas.getBoundingClientRect();
      return {x: r.left + box.x + (Math.floor(i / per) + 0.5) * cw, y: r.top + box.y + box.h - 2};
    };
    s.appendChild(canvas);
    if (l.fullestBytes.length === steps) s.appendChild(fullestChart());
    var detail = el('div', {id: 'step-detail', 'class': 'panel'});
    liveness.detail = detail;
    s.appendChild(detail);
    selectStep(peak.step);  // what is live at the peak, until another step is clicked
    s.appendChild(el('h3', {text: 'Always-live variables (all tiles)'}));
    s.appendChild(table(['variable', 'bytes'], R.alwaysLiveVariables.slice(0, 50).map(function (v) { return [v[0], by(v[1])]; })));
    if (R.alwaysLiveVariables.length > 50) s.appendChild(note('The 50 largest of ' + group(R.alwaysLiveVariables.length) + '.'));
  });
  // The compared report's total live bytes over its own schedule, drawn as a
  // line across the same width (the two schedules need not have as many
  // steps) on the same byte axis, scaled to the higher of the two.
  function compareLiveness(s, legend, ctx, box, maxY) {
    var l = O.liveness, n = l.notAlwaysLive.length, always = l.alwaysLive || 0, peak = peakLiveness(O);
    legend.appendChild(el('span', {}, [el('i', {style: 'background:#e15759;height:2px'}), 'compared report: total live (its own steps, same width)']));
    var mine = peakLiveness(R);
    s.insertBefore(el('p', {id: 'liveness-compare', 'data-bytes': peak.bytes, text: 'Compared report (' + O.path + '): peak not-always-live ' +
      bytes(peak.bytes) + ' at step ' + group(peak.step) + ' of ' + group(n) + ', ' + signedBytes(peak.bytes - mine.bytes) +
      ' against this one; always-live ' + bytes(always) + ' (' + signedBytes(always - (R.liveness.alwaysLive || 0)) + ').'}), legend);
    ctx.save();
    ctx.strokeStyle = '#e15759'; ctx.lineWidth = 1.5; ctx.beginPath();
    var columns = Math.min(n, Math.floor(box.w));
    for (var c = 0; c < columns; c++) {
      var first = Math.floor(c * n / columns), last = Math.max(first + 1, Math.floor((c + 1) * n / columns)), m = 0;
      for (var k = first; k < last; k++) m = Math.max(m, l.notAlwaysLive[k]);
      var x = box.x + (c + 0.5) * box.w / columns, y = box.y + box.h - (m + always) / maxY * box.h;
      if (c === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    }
    ctx.stroke();
    ctx.restore();
  }
  // One bar per pixel column of the box, the largest step it covers, drawn
  // on top of `base` bytes.
  function stepBars(ctx, box, values, base, maxY, colour) {
    var steps = values.length, columns = Math.min(steps, Math.floor(box.w)), per = steps / columns, cw = box.w / columns;
    var y0 = box.y + box.h - base / maxY * box.h;
    ctx.fillStyle = colour;
    for (var c = 0; c < columns; c++) {
      var first = Math.floor(c * per), last = Math.max(first + 1, Math.floor((c + 1) * per)), m = 0;
      for (var k = first; k < last; k++) m = Math.max(m, values[k]);
      var bh = m / maxY * box.h;
      ctx.fillRect(box.x + c * cw, y0 - bh, Math.max(cw, 0.6), bh);
    }
  }
  // The fullest tile of each step: its always-live bytes and the step's
  // not-always-live ones, against the memory of a tile.
  function fullestChart() {
    var l = R.liveness, steps = l.fullestBytes.length, cap = capacity(R);
    var totals = l.fullestBytes.map(function (b, i) { return b + (R.tiles ? R.tiles.alwaysLive[l.fullestTile[i]] : 0); });
    var wrap = el('div');
    var top = Math.max.apply(null, totals), showCap = cap && top * 4 >= cap;
    wrap.appendChild(el('h3', {text: 'The fullest tile at each step (its always-live bytes and the step\'s not-always-live ones' +
      (showCap ? '; dashed: memory per tile)' : ')')}));
    if (cap && !showCap) wrap.appendChild(note('At most ' + (top / cap * 100).toFixed(1) + ' % of the ' + bytes(cap) + ' of a tile: scaled to the data.'));
    var W = 1100, H = 220, box = {x: 80, y: 10, w: W - 100, h: H - 50};
    var canvas = makeCanvas(W, H, 'fullest-chart'), ctx = canvas.getContext('2d');
    var maxY = Math.max(top * (showCap ? 1 : 1.1), showCap ? cap : 0, 1);
    canvasAxes(ctx, box, maxY, 'program step', steps);
    stepBars(ctx, box, totals, 0, maxY, '#e15759');
    if (showCap) {
      var cy = box.y + box.h - cap / maxY * box.h;
      ctx.strokeStyle = '#000'; ctx.setLineDash([6, 3]);
      ctx.beginPath(); ctx.moveTo(box.x, cy); ctx.lineTo(box.x + box.w, cy); ctx.stroke(); ctx.setLineDash([]);
    }
    wrap.appendChild(canvas);
    return wrap;
  }
  function selectStep(i) {
    var d = liveness.detail, l = R.liveness, p = R.programs[l.program[i]] || {name: '?', kind: '?'};
    while (d.firstChild) d.removeChild(d.firstChild);
    d.setAttribute('data-step', i);
    d.appendChild(el('h3', {text: 'Step ' + group(i) + ': ' + p.name + ' (' + p.kind + ')'}));
    var rows = [['not-always-live, all tiles', by(l.notAlwaysLive[i])],
      ['always-live, all tiles', by(l.alwaysLive || 0)], ['total live', by(l.notAlwaysLive[i] + (l.alwaysLive || 0))]];
    if (l.fullestBytes.length > i) {
      rows.push(['fullest tile: tile ' + l.fullestTile[i] + ', not-always-live', by(l.fullestBytes[i])]);
      if (R.tiles) rows.push(['fullest tile, with its always-live', by(l.fullestBytes[i] + R.tiles.alwaysLive[l.fullestTile[i]])]);
    }
    d.appendChild(table(['measure', 'bytes'], rows));
    if (p.vertices !== undefined) d.appendChild(note('Runs compute set #' + p.computeSet + ' (' + group(p.vertices) + ' vertices).'));
    var all = R.notAlwaysLiveVariables;
    if (!all.length) {
      d.appendChild(note('This report does not list what is live at each step (a file written before tileprof recorded it).'));
      return;
    }
    // Largest first already: the first 50 live during the step, and the sum of all of them.
    var live = [], total = 0, count = 0;
    for (var k = 0; k < all.length; k++) {
      var v = all[k];
      if (v[2] > i || v[3] < i) continue;
      total += v[1]; count++;
      if (live.length < 50) live.push(v);
    }
    d.setAttribute('data-live-bytes', total);
    d.appendChild(el('h3', {text: 'Live during the step: ' + group(count) + ' not-always-live variables and receive buffers, ' + bytes(total)}));
    d.appendChild(table(['variable', 'bytes (all tiles)', 'live from step', 'to step'], live.map(function (v) {
      return [v[0], by(v[1]), num(v[2]), num(v[3])];
    }), 'step-live'));
    if (count > live.length) d.appendChild(note('The 50 largest of ' + group(count) + '.'));
  }

  // Program tree: the control program, its nodes expanded on demand.
  addView('programs', 'Program tree', function (s) {
    var P = R.programs;
    if (!P.length) { s.appendChild(note('The report has no program tree (a text report, or an older file).')); return; }
    var isChild = new Array(P.length);
    P.forEach(function (p) { p.children.forEach(function (c) { isChild[c] = true; }); });
    var steps = {};
    R.liveness.program.forEach(function (p, i) { (steps[p] = steps[p] || []).push(i); });
    var filter = el('input', {type: 'search', placeholder: 'Find a program by name', id: 'program-filter'});
    s.appendChild(filter);
    var found = el('div', {'class': 'note'});
    s.appendChild(found);
    function label(i) {
      var p = P[i], text = p.name + ' ';
      var span = el('span', {}, [text, el('span', {'class': 'kind', text: p.kind + (p.vertices !== undefined ? ', ' + group(p.vertices) + ' vertices' : '') +
        (steps[i] ? ', step ' + steps[i].slice(0, 3).map(group).join(', ') + (steps[i].length > 3 ? ', ...' : '') : '')})]);
      return span;
    }
    function node(i, depth) {
      var li = el('li', {'data-program': i});
      if (!P[i].children.length || depth > 64) { li.appendChild(label(i)); return li; }
      var det = el('details'), sum = el('summary');
      sum.appendChild(label(i));
      det.appendChild(sum);
      det.addEventListener('toggle', function () {
        if (!det.open || det.childNodes.length > 1) return;
        var ul = el('ul', {'class': 'tree'});
        P[i].children.forEach(function (c) { ul.appendChild(node(c, depth + 1)); });
        det.appendChild(ul);
      });
      li.appendChild(det);
      return li;
    }
    var root = el('ul', {'class': 'tree', id: 'program-tree'});
    P.forEach(function (p, i) { if (!isChild[i]) root.appendChild(node(i, 0)); });
    s.appendChild(root);
    var first = root.querySelector('details');
    if (first) { first.open = true; first.dispatchEvent(new Event('toggle')); }
    filter.addEventListener('input', function () {
      var q = filter.value.toLowerCase();
      if (!q) { found.textContent = ''; return; }
      var hits = [];
      P.forEach(function (p, i) { if (p.name.toLowerCase().indexOf(q) >= 0) hits.push(p.name + ' (' + p.kind + ')'); });
      found.textContent = hits.length + ' programs match' + (hits.length ? ': ' + hits.slice(0, 20).join('; ') + (hits.length > 20 ? '; ...' : '') : '');
    });
  });

  // Operations: what each HLO instruction became; click one for its compute
  // sets and the steps that run them.
  var operations = {};
  addView('operations', 'Operations', function (s) {
    var ops = R.operations;
    if (!ops.length) { s.appendChild(note('The report has no operations (a text report, or a file written before report format 1.1).')); return; }
    var withCycles = ops.some(function (o) { return o[6] !== null; });
    s.appendChild(note('Each HLO instruction the compiler lowered into compute sets: their vertices and vertex state, the bytes its steps received from other tiles, ' +
      'FLOPs (dots and convolutions)' + (withCycles ? ' and the cycles of the steps that ran it.' : '; cycles come with an execution (tileprof run).') +
      ' Click a row for its compute sets and steps.'));
    var filter = el('input', {type: 'search', placeholder: 'Filter by name or opcode', id: 'op-filter'});
    s.appendChild(filter);
    var columns = ['operation', 'opcode', 'compute sets', 'vertices', 'vertex state', 'exchange', 'FLOPs'];
    if (withCycles) columns.push('cycles');
    // Comparing: the same-named operation of the other report, as deltas.
    var other = {};
    if (O) {
      O.operations.forEach(function (o) { other[o[0]] = o; });
      columns.push('Δ vertices', 'Δ exchange');
      if (withCycles) columns.push('Δ cycles');
    }
    var t = table(columns, ops.map(function (o) {
      var row = [o[0], o[1], num(o[7].length), num(o[2]), by(o[3]), by(o[4]), o[5] === null ? null : num(o[5])];
      if (withCycles) row.push(num(o[6] || 0));
      if (O) {
        var b = other[o[0]];
        row.push(b ? delta(b[2] - o[2], false) : null, b ? delta(b[4] - o[4], true) : null);
        if (withCycles) row.push(b && b[6] !== null ? delta(b[6] - (o[6] || 0), false) : null);
      }
      return row;
    }), 'operations-table', function (i) { return {'data-op': i}; });
    if (O) {
      var only = O.operations.filter(function (o) { return !ops.some(function (a) { return a[0] === o[0]; }); }).length;
      s.appendChild(note('Δ: the compared report\'s operation of the same name minus this one (' + group(only) + ' of its ' +
        group(O.operations.length) + ' operations have no namesake here).'));
    }
    var sums = [0, 0, 0, 0, 0, 0, 0];
    ops.forEach(function (o) { sums[0] += o[7].length; sums[1] += o[2]; sums[2] += o[3]; sums[3] += o[4]; sums[4] += o[5] || 0; sums[5] += o[6] || 0; });
    var foot = el('tr', {id: 'op-totals', 'data-vertices': sums[1], 'data-cycles': sums[5], 'data-exchange': sums[3]});
    [el('th', {text: 'all ' + group(ops.length)}), el('th'), el('td', {'class': 'n', text: group(sums[0])}),
      el('td', {'class': 'n', text: group(sums[1])}), el('td', {'class': 'n', text: bytes(sums[2])}),
      el('td', {'class': 'n', text: bytes(sums[3])}), el('td', {'class': 'n', text: group(sums[4])})]
      .concat(withCycles ? [el('td', {'class': 'n', text: group(sums[5])})] : []).forEach(function (c) { foot.appendChild(c); });
    t.appendChild(el('tfoot', {}, [foot]));
    t.tBodies[0].addEventListener('click', function (e) {
      var tr = e.target.closest('tr');
      if (tr) selectOperation(Number(tr.getAttribute('data-op')));
    });
    filter.addEventListener('input', function () {
      var q = filter.value.toLowerCase();
      Array.prototype.forEach.call(t.tBodies[0].rows, function (tr) {
        var o = ops[Number(tr.getAttribute('data-op'))];
        tr.hidden = q !== '' && (o[0] + ' ' + o[1]).toLowerCase().indexOf(q) < 0;
      });
    });
    s.appendChild(t);
    var detail = el('div', {id: 'op-detail', 'class': 'panel'}, [note('Click an operation for its compute sets and the steps that run them.')]);
    operations.detail = detail;
    s.appendChild(detail);
  });
  function selectOperation(i) {
    var o = R.operations[i], d = operations.detail;
    while (d.firstChild) d.removeChild(d.firstChild);
    d.setAttribute('data-op', i);
    d.appendChild(el('h3', {text: o[0] + ' (' + o[1] + ')'}));
    // The schedule steps that execute each of its compute sets.
    var programOf = {};
    R.programs.forEach(function (p, k) { if (p.computeSet !== undefined) (programOf[p.computeSet] = programOf[p.computeSet] || []).push(k); });
    var stepsOf = {};
    R.liveness.program.forEach(function (p, step) { (stepsOf[p] = stepsOf[p] || []).push(step); });
    d.appendChild(table(['compute set', 'vertices', 'steps', 'live at those steps (max, all tiles)'], o[7].map(function (cs) {
      var steps = [];
      (programOf[cs] || []).forEach(function (p) { steps = steps.concat(stepsOf[p] || []); });
      var live = steps.length ? Math.max.apply(null, steps.map(function (k) { return R.liveness.notAlwaysLive[k]; })) : null;
      return [R.computeSets[cs][0], num(R.computeSets[cs][1]), steps.slice(0, 8).map(group).join(', ') + (steps.length > 8 ? ', ...' : ''), live === null ? null : by(live)];
    }), 'op-compute-sets'));
    d.appendChild(note('Which tiles an operation\'s vertices are on is not in the report yet; the Memory view has each tile\'s largest variables.'));
  }

  // Execution: cycles per step (and per IPU when profiled per tile).
  addView('execution', 'Execution', function (s) {
    var x = R.execution;
    if (!x) { s.appendChild(note('The report has no execution part: it was compiled, not run (tileprof run --profile-execution=tile profiles one).')); return; }
    s.appendChild(el('p', {text: 'Total: ' + group(x.totalCycles) + ' cycles' + (x.clockHz ? ', ' + (x.totalCycles / x.clockHz * 1e6).toFixed(1) + ' microseconds at ' + (x.clockHz / 1e6).toFixed(0) + ' MHz' : '') + '.'}));
    var W = 1100, H = 260, box = {x: 80, y: 10, w: W - 100, h: H - 50};
    var n = x.steps.length, svg = svgEl('svg', {width: W, height: H, id: 'execution-chart'});
    var max = Math.max.apply(null, x.steps.map(function (st) { return st.cycles; }).concat([1]));
    ticks(max, 5).forEach(function (v) {
      var y = box.y + box.h - v / max * box.h;
      svg.appendChild(svgEl('line', {x1: box.x, x2: box.x + box.w, y1: y, y2: y, stroke: '#ddd'}));
      svg.appendChild(svgEl('text', {x: box.x - 4, y: y + 4, 'text-anchor': 'end', text: group(v)}));
    });
    var bw = box.w / Math.max(n, 1);
    x.steps.forEach(function (st, i) {
      var bh = st.cycles / max * box.h;
      var r = svgEl('rect', {x: box.x + i * bw, y: box.y + box.h - bh, width: Math.max(bw - 0.5, 0.5), height: bh, fill: '#59a14f'});
      r.appendChild(svgEl('title', {text: 'step ' + i + ': ' + st.program + ', ' + group(st.cycles) + ' cycles'}));
      svg.appendChild(r);
    });
    svg.appendChild(svgEl('text', {x: box.x + box.w / 2, y: H - 8, 'text-anchor': 'middle', text: 'execution step (cycles on the y axis)'}));
    s.appendChild(svg);
    var ipus = x.steps.length && x.steps[0].cyclesByIpu.length;
    var cols = ['step', 'program', 'cycles'];
    for (var k = 0; k < ipus; k++) cols.push('IPU ' + k + ' busiest tile');
    s.appendChild(table(cols, x.steps.map(function (st, i) {
      return [num(i), st.program, num(st.cycles)].concat(st.cyclesByIpu.map(num));
    }), 'execution-steps'));
  });

  // Compare: the two reports' totals, categories and most changed tiles.
  if (O) {
    addView('compare', 'Compare', function (s) {
      s.appendChild(el('p', {text: 'Deltas are the compared report minus this one (' + R.path + ' -> ' + O.path + ').'}));
      if (R.tiles && O.tiles && tileCount(R) === tileCount(O)) {
        s.appendChild(el('h3', {text: 'Change per tile (excluding gaps)'}));
        var W = 1100, H = 200, mid = H / 2, n = tileCount(R);
        var svg = svgEl('svg', {width: W, height: H, id: 'compare-chart'});
        var d = R.tiles.excludingGaps.map(function (a, i) { return O.tiles.excludingGaps[i] - a; });
        var max = Math.max.apply(null, d.map(Math.abs).concat([1]));
        var columns = Math.min(n, W - 100), per = n / columns, path = '';
        for (var c = 0; c < columns; c++) {
          var first = Math.floor(c * per), last = Math.max(first + 1, Math.floor((c + 1) * per)), m = 0;
          for (var k = first; k < last; k++) if (Math.abs(d[k]) > Math.abs(m)) m = d[k];
          path += 'M' + (80 + c) + ' ' + mid + 'V' + (mid - m / max * (mid - 10));
        }
        svg.appendChild(svgEl('path', {d: path, stroke: '#e15759', fill: 'none'}));
        svg.appendChild(svgEl('line', {x1: 80, x2: W - 20, y1: mid, y2: mid, stroke: '#999'}));
        svg.appendChild(svgEl('text', {x: 76, y: 14, 'text-anchor': 'end', text: signedBytes(max)}));
        svg.appendChild(svgEl('text', {x: 76, y: H - 6, 'text-anchor': 'end', text: signedBytes(-max)}));
        s.appendChild(svg);
      }
      // `tileprof compare`'s tables: a and b are bytes in the memory tables,
      // cycles in the execution ones, and the target's fields say.
      var memoryTables = {categories: 1, tiles: 1, totals: 1};
      s.appendChild(analysisTables(DATA.compare, {target: 'Target', totals: 'Totals', categories: 'Categories',
        tiles: 'Tiles that changed most', execution: 'Execution (cycles)', vertex_types: 'Vertex types (cycles)'}, [],
      function (table, column, row) {
        if (column === 'tile' || /^instances/.test(column)) return false;
        if (table === 'target') return /bytes|memory/.test(row.field || '');
        if (table === 'totals') return !/tiles/.test(row.measure || '');
        return !!memoryTables[table];
      }));
    });
  }

  // ---- Page frame.
  var header = el('header', {}, [el('h1', {text: 'tileprof view: ' + R.path + (O ? ' vs ' + O.path : '')}), nav]);
  var select = el('select', {id: 'unit'});
  Object.keys(UNITS).forEach(function (u) { var o = el('option', {value: u, text: u}); if (u === unit) o.selected = true; select.appendChild(o); });
  select.addEventListener('change', function () {
    unit = select.value;
    try { localStorage.setItem('tileprof.unit', unit); } catch (e) { /* no storage */ }
    redrawAll();
  });
  header.appendChild(el('label', {}, ['Units ', select]));
  document.body.appendChild(header);
  document.body.appendChild(main);
  var start = (location.hash || '').slice(1);
  show(views.some(function (v) { return v.name === start; }) ? start : 'summary');
  window.tileprofView = {
    data: DATA,
    show: show,
    // Client coordinates of a tile on the tile map and of a step on the
    // liveness chart (the views must be shown first).
    tilePoint: function (t) { return memory.place(t); },
    stepPoint: function (i) { return liveness.point(i); },
    selectTile: selectTile,
    selectOperation: selectOperation
  };
  document.body.setAttribute('data-ready', '1');
})();

// tileprof view (see base.js): the Program tree, Operations, Execution and
// Compare views, then the page frame; sets <body data-ready="1"> last.
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
      var p = P[i], text = p.name + ' ', vertices = programVertices(p);
      var span = el('span', {}, [text, el('span', {'class': 'kind', text: p.kind + (vertices !== undefined ? ', ' + group(vertices) + ' vertices' : '') +
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

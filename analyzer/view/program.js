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
    // Comparing: nodes whose name the compared report's tree lacks are marked.
    var otherNames = {};
    if (O) O.programs.forEach(function (p) { otherNames[p.name] = true; });
    function label(i) {
      var p = P[i], text = p.name + ' ', vertices = programVertices(p);
      if (O && !otherNames[p.name]) text = '+ ' + text;
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
    if (O) s.appendChild(programKinds());
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

  // Program nodes by kind in both reports, and the names only one has.
  function programKinds() {
    var wrap = el('div', {id: 'program-compare'}), counts = {};
    R.programs.forEach(function (p) { (counts[p.kind] = counts[p.kind] || [0, 0])[0]++; });
    O.programs.forEach(function (p) { (counts[p.kind] = counts[p.kind] || [0, 0])[1]++; });
    wrap.appendChild(el('h3', {text: 'Program nodes by kind, this report and the compared one'}));
    wrap.appendChild(table(['kind', 'nodes', 'compared', 'Δ'], Object.keys(counts).sort().map(function (k) {
      return [k, num(counts[k][0]), num(counts[k][1]), delta(counts[k][1] - counts[k][0], false)];
    }), 'program-kinds'));
    var mine = {}, theirs = {};
    R.programs.forEach(function (p) { mine[p.name] = true; });
    O.programs.forEach(function (p) { theirs[p.name] = true; });
    var here = Object.keys(mine).filter(function (n) { return !theirs[n]; });
    var there = Object.keys(theirs).filter(function (n) { return !mine[n]; });
    wrap.appendChild(note(group(here.length) + ' program names only here (marked + in the tree)' + (here.length ? ': ' + here.slice(0, 10).join(', ') + (here.length > 10 ? ', ...' : '') : '') +
      '; ' + group(there.length) + ' only in the compared report' + (there.length ? ': ' + there.slice(0, 10).join(', ') + (there.length > 10 ? ', ...' : '') : '') + '.'));
    return wrap;
  }

  // Operations: what each HLO instruction became; click one for its compute
  // sets and the steps that run them.
  var operations = {};
  addView('operations', 'Operations', function (s) {
    var ops = R.operations;
    if (!ops.length) { s.appendChild(note('The report has no operations (a text report, or a file written before report format 1.1).')); return; }
    var withCycles = ops.some(function (o) { return o[6] !== null; });
    var withTiles = ops.some(function (o) { return o[9] !== null && o[9] !== undefined; });
    s.appendChild(note('Each HLO instruction the compiler lowered into compute sets: the tiles its vertices are on, their vertices, vertex state and code ' +
      '(each codelet once per tile: what the operation needs alone), the bytes its steps received from other tiles, ' +
      'FLOPs (estimated from the HLO: dots and convolutions 2 per multiply-add, floating-point elementwise 1 per element, reductions 1 per element combined; blank where not estimated)' +
      (withCycles ? ' and the cycles of the steps that ran it.' : '; cycles come with an execution (tileprof run).') +
      ' Click a row for its tiles, compute sets and steps.'));
    var filter = el('input', {type: 'search', placeholder: 'Filter by name or opcode', id: 'op-filter'});
    s.appendChild(filter);
    var columns = ['operation', 'opcode', 'compute sets'].concat(withTiles ? ['tiles'] : [], ['vertices', 'vertex state'],
      withTiles ? ['code'] : [], ['exchange', 'FLOPs']);
    if (withCycles) columns.push('cycles');
    // Comparing: the same-named operation of the other report, as deltas.
    var other = {};
    if (O) {
      O.operations.forEach(function (o) { other[o[0]] = o; });
      columns.push('Δ vertices', 'Δ exchange');
      if (withCycles) columns.push('Δ cycles');
    }
    var t = table(columns, ops.map(function (o) {
      var row = [o[0], o[1], num(o[7].length)].concat(withTiles ? [o[9] === null ? null : num(o[9])] : [],
        [num(o[2]), by(o[3])], withTiles ? [o[8] === null ? null : by(o[8])] : [], [by(o[4]), o[5] === null ? null : num(o[5])]);
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
    var sums = {sets: 0, vertices: 0, state: 0, code: 0, exchange: 0, flops: 0, cycles: 0};
    ops.forEach(function (o) {
      sums.sets += o[7].length; sums.vertices += o[2]; sums.state += o[3]; sums.exchange += o[4];
      sums.flops += o[5] || 0; sums.cycles += o[6] || 0; sums.code += o[8] || 0;
    });
    var foot = el('tr', {id: 'op-totals', 'data-vertices': sums.vertices, 'data-cycles': sums.cycles, 'data-exchange': sums.exchange,
      'data-flops': sums.flops, 'data-code': sums.code});
    function cell(text) { return el('td', {'class': 'n', text: text}); }
    [el('th', {text: 'all ' + group(ops.length)}), el('th'), cell(group(sums.sets))]
      .concat(withTiles ? [el('td')] : [], [cell(group(sums.vertices)), cell(bytes(sums.state))],
        withTiles ? [cell(bytes(sums.code))] : [], [cell(bytes(sums.exchange)), cell(group(sums.flops))])
      .concat(withCycles ? [cell(group(sums.cycles))] : []).forEach(function (c) { foot.appendChild(c); });
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
    operationTiles(d, o);
  }
  // The tiles an operation's vertices are on: a strip of the chip's tiles
  // (each IPU a band) marking them, and their runs; click a run for the tile.
  function operationTiles(d, o) {
    var runs = o[10] || [];
    if (o[9] === null || o[9] === undefined) {
      d.appendChild(note('Which tiles this operation is on is not in this report (a file written before report format 1.2).'));
      return;
    }
    var n = tileCount(R) || (R.target ? R.target.totalTiles : 0);
    d.appendChild(el('h3', {id: 'op-tiles', 'data-tiles': o[9], text: 'On ' + group(o[9]) + ' tiles' + (n ? ' of ' + group(n) : '') +
      ' in ' + group(runs.length) + ' runs of consecutive tiles'}));
    if (n) {
      var W = 1100, H = 40, canvas = makeCanvas(W, H, 'op-tile-strip'), ctx = canvas.getContext('2d');
      var perIpu = (R.target && R.target.tilesPerIpu) || n;
      ctx.fillStyle = '#eee'; ctx.fillRect(0, 0, W, H - 12);
      ctx.fillStyle = '#999';
      for (var ipu = 1; ipu * perIpu < n; ipu++) ctx.fillRect(ipu * perIpu / n * W, 0, 1, H - 12);
      ctx.fillStyle = '#4e79a7';
      runs.forEach(function (r) { ctx.fillRect(r[0] / n * W, 2, Math.max((r[1] - r[0] + 1) / n * W, 1), H - 16); });
      ctx.fillStyle = '#333'; ctx.font = '10px sans-serif';
      ctx.fillText('tile 0', 2, H - 2);
      ctx.fillText('tile ' + group(n - 1), W - 70, H - 2);
      d.appendChild(canvas);
    }
    d.appendChild(table(['first tile', 'last tile', 'tiles', 'vertices'], runs.slice(0, 100).map(function (r) {
      return [num(r[0]), num(r[1]), num(r[1] - r[0] + 1), num(r[2])];
    }), 'op-tile-runs'));
    if (runs.length > 100) d.appendChild(note('The first 100 runs of ' + group(runs.length) + '.'));
  }

  // Execution: cycles per step, split into compute, exchange and sync (the
  // tile average: every tile spends the step's cycles in one of the three),
  // per IPU and per tile when profiled per tile, against the compared run.
  var SPLIT = [['compute', '#4e79a7'], ['exchange', '#f28e2b'], ['sync', '#bab0ac']];
  addView('execution', 'Execution', function (s) {
    var x = R.execution;
    if (!x) { s.appendChild(note('The report has no execution part: it was compiled, not run (tileprof run --profile-execution=tile profiles one).')); return; }
    s.appendChild(el('p', {text: 'Total: ' + group(x.totalCycles) + ' cycles' + (x.clockHz ? ', ' + (x.totalCycles / x.clockHz * 1e6).toFixed(1) + ' microseconds at ' + (x.clockHz / 1e6).toFixed(0) + ' MHz' : '') + '.'}));
    var OX = O && O.execution;
    if (OX) {
      s.appendChild(el('p', {id: 'execution-compare', 'data-delta': OX.totalCycles - x.totalCycles, text: 'Compared run (' + O.path + '): ' +
        group(OX.totalCycles) + ' cycles, ' + delta(OX.totalCycles - x.totalCycles, false).t + ' against this one, in ' + group(OX.steps.length) + ' steps (here ' + group(x.steps.length) + ').'}));
    }
    var tiles = tileCount(R) || (R.target ? R.target.totalTiles : 0) || 1;
    var split = x.steps.length && x.steps.every(function (st) { return st.split; });
    var legend = el('div', {'class': 'legend'});
    (split ? SPLIT : [['cycles', '#59a14f']]).forEach(function (k) { legend.appendChild(el('span', {}, [el('i', {style: 'background:' + k[1]}), k[0]])); });
    if (OX) legend.appendChild(el('span', {}, [el('i', {style: 'background:#e15759;height:2px'}), 'compared run (its own steps, same width)']));
    s.appendChild(el('h3', {text: 'Cycles per step' + (split ? ', split as the average tile spends them' : '')}));
    s.appendChild(legend);
    var W = 1100, H = 260, box = {x: 80, y: 10, w: W - 100, h: H - 50};
    var n = x.steps.length, svg = svgEl('svg', {width: W, height: H, id: 'execution-chart'});
    var max = Math.max.apply(null, x.steps.map(function (st) { return st.cycles; }).concat(OX ? OX.steps.map(function (st) { return st.cycles; }) : [], [1]));
    ticks(max, 5).forEach(function (v) {
      var y = box.y + box.h - v / max * box.h;
      svg.appendChild(svgEl('line', {x1: box.x, x2: box.x + box.w, y1: y, y2: y, stroke: '#ddd'}));
      svg.appendChild(svgEl('text', {x: box.x - 4, y: y + 4, 'text-anchor': 'end', text: group(v)}));
    });
    var bw = box.w / Math.max(n, 1);
    x.steps.forEach(function (st, i) {
      var parts = split ? st.split.map(function (c) { return c / tiles; }) : [st.cycles];
      var y = box.y + box.h;
      parts.forEach(function (c, k) {
        var bh = c / max * box.h;
        var r = svgEl('rect', {x: box.x + i * bw, y: y - bh, width: Math.max(bw - 0.5, 0.5), height: bh, fill: split ? SPLIT[k][1] : '#59a14f'});
        r.appendChild(svgEl('title', {text: 'step ' + i + ': ' + st.program + ', ' + group(st.cycles) + ' cycles' +
          (split ? ' (compute ' + group(parts[0]) + ', exchange ' + group(parts[1]) + ', sync ' + group(parts[2]) + ' on the average tile)' : '')}));
        svg.appendChild(r);
        y -= bh;
      });
    });
    if (OX && OX.steps.length) {
      var m = OX.steps.length, path = '';
      OX.steps.forEach(function (st, i) {
        path += (i ? 'L' : 'M') + (box.x + (i + 0.5) * box.w / m).toFixed(1) + ' ' + (box.y + box.h - st.cycles / max * box.h).toFixed(1);
      });
      svg.appendChild(svgEl('path', {d: path, stroke: '#e15759', fill: 'none', 'stroke-width': 1.5, id: 'execution-compare-line'}));
    }
    svg.appendChild(svgEl('text', {x: box.x + box.w / 2, y: H - 8, 'text-anchor': 'middle', text: 'execution step (cycles on the y axis)'}));
    s.appendChild(svg);
    if (x.steps.some(function (st) { return st.chain && st.chain.length; })) s.appendChild(flameChart(x));
    if (x.tiles && x.tiles.compute.length) s.appendChild(tileSplitChart(x.tiles));
    else s.appendChild(note('Per-tile cycles come with a tile-level profile (tileprof run --profile-execution tile).'));
    if (OX) s.appendChild(programCycles(x, OX));
    var ipus = x.steps.length && x.steps[0].cyclesByIpu.length;
    var cols = ['step', 'program', 'cycles'].concat(split ? ['compute (avg tile)', 'exchange (avg tile)', 'sync (avg tile)'] : []);
    for (var k = 0; k < ipus; k++) cols.push('IPU ' + k + ' busiest tile');
    s.appendChild(el('h3', {text: 'Steps'}));
    s.appendChild(table(cols, x.steps.map(function (st, i) {
      return [num(i), st.program, num(st.cycles)].concat(split ? st.split.map(function (c) { return num(c / tiles); }) : [], st.cyclesByIpu.map(num));
    }), 'execution-steps'));
  });
  // The run over time by program: a row per depth of the program tree, a
  // bar per run of consecutive steps under one node (a loop body's steps
  // repeat under their Repeat), its width the cycles; click a bar.
  function flameChart(x) {
    var wrap = el('div');
    wrap.appendChild(el('h3', {text: 'Flame by program (time runs left to right; click a bar)'}));
    var total = 0, starts = [];
    x.steps.forEach(function (st) { starts.push(total); total += st.cycles; });
    // A step named after no node of the tree (a loop's predicate broadcast,
    // the summed steps past the recorded ones) belongs where the run is.
    var chains = [], last = [];
    x.steps.forEach(function (st) { if (st.chain && st.chain.length) last = st.chain; chains.push(last); });
    var depth = 0;
    chains.forEach(function (c) { depth = Math.max(depth, c.length); });
    var bars = [];
    for (var d = 0; d < depth; d++) {
      var open = null;
      x.steps.forEach(function (st, i) {
        var node = chains[i].length > d ? chains[i][d] : null;
        if (open && open.node === node && open.last === i - 1) { open.last = i; open.end = starts[i] + st.cycles; return; }
        if (node === null) { open = null; return; }
        open = {depth: d, node: node, first: i, last: i, start: starts[i], end: starts[i] + st.cycles};
        bars.push(open);
      });
    }
    var W = 1100, row = 18, box = {x: 80, y: 4, w: W - 100}, H = depth * row + 30;
    var canvas = makeCanvas(W, H, 'execution-flame'), ctx = canvas.getContext('2d');
    var scale = box.w / Math.max(total, 1);
    ctx.font = '11px sans-serif'; ctx.textBaseline = 'middle';
    bars.forEach(function (b) {
      var px = box.x + b.start * scale, pw = Math.max((b.end - b.start) * scale, 0.5), py = box.y + b.depth * row;
      var p = R.programs[b.node] || {name: '?', kind: '?'};
      ctx.fillStyle = COLOURS[(b.node * 7 + b.depth) % COLOURS.length];
      ctx.fillRect(px, py, pw, row - 2);
      if (pw > 40) {
        ctx.save(); ctx.beginPath(); ctx.rect(px, py, pw, row - 2); ctx.clip();
        ctx.fillStyle = '#fff'; ctx.fillText(p.name, px + 3, py + row / 2 - 1); ctx.restore();
      }
    });
    ctx.fillStyle = '#333'; ctx.textAlign = 'center'; ctx.textBaseline = 'top';
    ticks(total, 8).forEach(function (v) { ctx.fillText(group(v), box.x + v * scale, box.y + depth * row + 2); });
    ctx.fillText('cycles', box.x + box.w / 2, box.y + depth * row + 14);
    var detail = el('p', {id: 'execution-flame-detail', 'class': 'note', text: 'Click a bar for its program and cycles.'});
    canvas.addEventListener('click', function (e) {
      var r = canvas.getBoundingClientRect(), cx = e.clientX - r.left, cy = e.clientY - r.top;
      var d = Math.floor((cy - box.y) / row), t = (cx - box.x) / scale;
      var hit = bars.filter(function (b) { return b.depth === d && b.start <= t && t <= b.end; })[0];
      if (!hit) return;
      var p = R.programs[hit.node];
      detail.setAttribute('data-program', hit.node);
      detail.textContent = p.name + ' (' + p.kind + '): steps ' + group(hit.first) + ' to ' + group(hit.last) + ', ' +
        group(hit.end - hit.start) + ' cycles (' + ((hit.end - hit.start) / Math.max(total, 1) * 100).toFixed(1) + ' % of the run).';
    });
    wrap.appendChild(canvas);
    wrap.appendChild(detail);
    return wrap;
  }
  // Each tile's cycles over the run, stacked compute/exchange/sync: one
  // column per tile or per group of tiles (drawn as its busiest); click one.
  function tileSplitChart(t) {
    var wrap = el('div'), n = t.compute.length;
    wrap.appendChild(el('h3', {text: 'Cycles per tile over the run (click a tile)'}));
    var W = 1100, H = 240, box = {x: 80, y: 10, w: W - 100, h: H - 50};
    var canvas = makeCanvas(W, H, 'execution-tiles'), ctx = canvas.getContext('2d');
    var total = function (i) { return t.compute[i] + t.exchange[i] + t.sync[i]; };
    var maxY = 1;
    for (var i = 0; i < n; i++) maxY = Math.max(maxY, total(i));
    canvasAxes(ctx, box, maxY, 'tile (cycles on the y axis)', n, group);
    var columns = Math.min(n, box.w), per = n / columns, cw = box.w / columns, shown = [];
    for (var c = 0; c < columns; c++) {
      var first = Math.floor(c * per), last = Math.max(first + 1, Math.floor((c + 1) * per)), best = first;
      for (var k = first; k < last; k++) if (t.compute[k] + t.exchange[k] > t.compute[best] + t.exchange[best]) best = k;
      shown.push(best);
      var y = box.y + box.h;
      [t.compute[best], t.exchange[best], t.sync[best]].forEach(function (v, j) {
        var bh = v / maxY * box.h;
        ctx.fillStyle = SPLIT[j][1];
        ctx.fillRect(box.x + c * cw, y - bh, Math.max(cw - (cw > 3 ? 0.5 : 0), 0.6), bh);
        y -= bh;
      });
    }
    var detail = el('p', {id: 'execution-tile-detail', 'class': 'note', text: 'Click a tile for its split.'});
    canvas.addEventListener('click', function (e) {
      var col = Math.floor((e.clientX - canvas.getBoundingClientRect().left - box.x) / cw);
      if (col < 0 || col >= columns) return;
      var tile = shown[col], all = total(tile) || 1;
      detail.setAttribute('data-tile', tile);
      detail.textContent = 'Tile ' + tile + ': compute ' + group(t.compute[tile]) + ' (' + (t.compute[tile] / all * 100).toFixed(1) + ' %), exchange ' +
        group(t.exchange[tile]) + ' (' + (t.exchange[tile] / all * 100).toFixed(1) + ' %), sync ' + group(t.sync[tile]) + ' (' + (t.sync[tile] / all * 100).toFixed(1) + ' %) cycles.';
    });
    wrap.appendChild(canvas);
    if (per > 1) wrap.appendChild(note('Each column is ' + per.toFixed(1) + ' tiles, drawn as the busiest of them.'));
    wrap.appendChild(detail);
    return wrap;
  }
  // Cycles by program name in both runs, largest change first.
  function programCycles(x, ox) {
    var sums = {};
    x.steps.forEach(function (st) { (sums[st.program] = sums[st.program] || [0, 0])[0] += st.cycles; });
    ox.steps.forEach(function (st) { (sums[st.program] = sums[st.program] || [0, 0])[1] += st.cycles; });
    var rows = Object.keys(sums).map(function (p) { return [p, sums[p][0], sums[p][1]]; });
    rows.sort(function (a, b) { return Math.abs(b[2] - b[1]) - Math.abs(a[2] - a[1]); });
    var wrap = el('div');
    wrap.appendChild(el('h3', {text: 'Cycles by program, this run and the compared one (largest change first)'}));
    wrap.appendChild(table(['program', 'cycles', 'compared', 'Δ'], rows.slice(0, 50).map(function (r) {
      return [r[0], num(r[1]), num(r[2]), delta(r[2] - r[1], false)];
    }), 'execution-compare-programs'));
    return wrap;
  }

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

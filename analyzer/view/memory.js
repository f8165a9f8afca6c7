// tileprof view (see base.js): the Summary, Insights, Memory and Liveness
// views.
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
        : 'Does not fit: ' + group(oom) + ' tile(s) out of memory'})]));
    if (O) {
      var theirs = outOfMemory(O);
      s.appendChild(el('p', {id: 'fit-compare'}, ['Compared report (' + O.path + '): ', el('span', {'class': 'badge ' + (theirs === 0 ? 'ok' : 'bad'),
        text: theirs === null ? 'capacity unknown' : theirs === 0 ? 'fits' : 'does not fit: ' + group(theirs) + ' tile(s) out of memory'}),
        oom !== null && theirs !== null ? ' (Δ tiles out of memory, the compared report minus this one: ' + delta(theirs - oom, false).t + ')' : '']));
    }
    var hist = R.histogram && R.histogram.histogram;
    if (hist && hist.length) {
      s.appendChild(el('h3', {text: 'Tiles by memory used (excluding gaps)'}));
      s.appendChild(histogramSvg(hist));
    }
    s.appendChild(analysisTables(R.oom, {
      summary: 'Out-of-memory summary', tiles: 'The worst tiles', categories: 'Their categories',
      vertex_types: 'Their vertex types', variables: 'Their largest variables', tensors: 'Largest tensors',
      suggestions: 'Recommendations (estimated bytes saved on the tile)'}, ['tensors']));
    if (O) {
      var otherHist = O.histogram && O.histogram.histogram;
      s.appendChild(el('h2', {text: 'The compared report'}));
      if (otherHist && otherHist.length) s.appendChild(histogramSvg(otherHist));
      var compared = analysisTables(O.oom, {summary: 'Out-of-memory summary', tiles: 'The worst tiles'}, ['tensors', 'categories', 'vertex_types', 'variables', 'suggestions']);
      compared.id = 'insights-compare';
      s.appendChild(compared);
    }
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
    if (O && O.tiles && tileCount(O) === n) legend.appendChild(el('span', {id: 'memory-compare'}, [el('i', {style: 'background:#e15759;height:2px'}), 'compared report, the same tiles']));
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
    var comparable = O && O.tiles && tileCount(O) === n;
    if (comparable) compareTiles(ctx, box, shown, maxY);
    if (O && !comparable) s.appendChild(note('The compared report ' + (O.tiles ? 'has ' + group(tileCount(O)) + ' tiles' : 'has no per-tile data') + ': no per-tile overlay.'));
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
  // The compared report's bytes on the tiles each column shows, as a line.
  function compareTiles(ctx, box, shown, maxY) {
    var cw = box.w / shown.length;
    ctx.save();
    ctx.strokeStyle = '#e15759'; ctx.lineWidth = 1.5; ctx.beginPath();
    shown.forEach(function (t, c) {
      var x = box.x + (c + 0.5) * cw, y = Math.max(box.y, box.y + box.h - O.tiles.excludingGaps[t] / maxY * box.h);
      if (c === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.stroke();
    ctx.restore();
  }
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
    if (O && O.tiles && tileCount(O) === tileCount(R))
      rows.push(['compared report, excluding gaps', by(O.tiles.excludingGaps[t])], ['Δ', delta(O.tiles.excludingGaps[t] - R.tiles.excludingGaps[t], true)]);
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
    if (l.byIpu && l.byIpu.length > 1) s.appendChild(ipuChart());
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
  // Each IPU's live bytes (its always-live and the step's not-always-live)
  // at every step, one line per IPU.
  function ipuChart() {
    var l = R.liveness, ipus = l.byIpu.length, steps = l.notAlwaysLive.length;
    var wrap = el('div', {id: 'liveness-ipus'});
    wrap.appendChild(el('h3', {text: 'Live memory per IPU at each step (always-live and not-always-live)'}));
    var legend = el('div', {'class': 'legend'});
    var W = 1100, H = 240, box = {x: 80, y: 10, w: W - 100, h: H - 50};
    var canvas = makeCanvas(W, H, 'liveness-ipu-chart'), ctx = canvas.getContext('2d');
    var base = function (k) { return (l.alwaysLiveByIpu && l.alwaysLiveByIpu[k]) || 0; };
    var maxY = 1;
    l.byIpu.forEach(function (v, k) { maxY = Math.max(maxY, Math.max.apply(null, v) + base(k)); });
    canvasAxes(ctx, box, maxY, 'program step', steps);
    var columns = Math.min(steps, Math.floor(box.w));
    l.byIpu.forEach(function (v, k) {
      var colour = COLOURS[k % COLOURS.length];
      if (k < 24) legend.appendChild(el('span', {}, [el('i', {style: 'background:' + colour}), 'IPU ' + k]));
      ctx.strokeStyle = colour; ctx.lineWidth = 1.2; ctx.beginPath();
      for (var c = 0; c < columns; c++) {
        var first = Math.floor(c * steps / columns), last = Math.max(first + 1, Math.floor((c + 1) * steps / columns)), m = 0;
        for (var j = first; j < last; j++) m = Math.max(m, v[j]);
        var x = box.x + (c + 0.5) * box.w / columns, y = box.y + box.h - (m + base(k)) / maxY * box.h;
        if (c === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      }
      ctx.stroke();
    });
    wrap.appendChild(legend);
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
    (l.byIpu || []).forEach(function (v, k) {
      if (l.byIpu.length > 1) rows.push(['IPU ' + k + ': not-always-live', by(v[i])]);
    });
    d.appendChild(table(['measure', 'bytes'], rows));
    var vertices = programVertices(p);
    if (vertices !== undefined) d.appendChild(note('Runs compute set #' + p.computeSet + ' (' + group(vertices) + ' vertices).'));
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

// Drives Debian's headless Chromium (playwright-core, no bundled browser)
// over `tileprof view` pages, as a user would: every view is shown, a tile
// is clicked on the tile map, a step on the liveness chart, a node of the
// program tree opened, the units changed, and a Compare page shows deltas.
// With --serve, `TILEPROF view REPORT --serve 0` is started and the page it
// serves opened (its data fetched from the server), then the server is
// stopped with SIGINT. No page may log a console error or throw.
//
//   node view_test.mjs [--serve TILEPROF REPORT] PAGE.html [PAGE.html ...]
//   (SCREENSHOTS=DIR saves each view)
// Exits 0 when every check passes; prints each failure and exits 1.
import {chromium} from 'playwright-core';
import {spawn} from 'node:child_process';
import path from 'node:path';

const browserPath = process.env.CHROMIUM || '/usr/bin/chromium';
const shots = process.env.SCREENSHOTS || '';
const failures = [];
function check(ok, page, what) {
  if (!ok) failures.push(`${path.basename(page)}: ${what}`);
  return ok;
}

// A whole-page screenshot from the top (the header sticks to the top of
// the window, so a scrolled page would show it over the content).
async function shot(page, file) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({path: file, fullPage: true});
}

async function testPage(browser, file) {
  const context = await browser.newContext({viewport: {width: 1280, height: 900}});
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) errors.push('fetched ' + r.url()); });
  await page.goto('file://' + path.resolve(file));
  await page.waitForSelector('body[data-ready="1"]', {timeout: 20000});
  const data = await page.evaluate(() => window.tileprofView.data);
  const report = data.report;
  const name = path.basename(file, '.html');

  for (const view of await page.$$eval('nav button', (b) => b.map((x) => x.dataset.view))) {
    await page.click(`nav button[data-view="${view}"]`);
    const visible = await page.isVisible(`#view-${view}`);
    const content = await page.$eval(`#view-${view}`, (s) => s.children.length);
    check(visible && content > 1, file, `view ${view} is shown with content (${visible}, ${content})`);
    if (shots) await shot(page, path.join(shots, `${name}-${view}.png`));
  }

  // Memory: click the fullest tile on the tile map.
  if (report.tiles) {
    await page.click('nav button[data-view="memory"]');
    const bytes = report.tiles.excludingGaps;
    const tile = bytes.indexOf(Math.max(...bytes));
    const at = await page.evaluate((t) => window.tileprofView.tilePoint(t), tile);
    await page.mouse.click(at.x, at.y);
    const shown = await page.getAttribute('#tile-detail', 'data-tile');
    check(shown === String(tile), file, `clicking tile ${tile} on the map shows it (got ${shown})`);
    const text = await page.textContent('#tile-detail');
    check(text.includes(`Tile ${tile} `), file, 'the tile detail names the tile');
    if (report.variables.some((v) => v[0] === tile))
      check(text.includes(report.variables.find((v) => v[0] === tile)[1]), file, 'the tile detail lists its largest variable');
    // Stacked by region and by liveness: each redraws, the legend follows.
    for (const mode of ['region', 'liveness', 'category']) {
      await page.selectOption('#memory-stack', mode);
      const legend = await page.textContent('#view-memory .legend');
      const expect = {region: 'Non-interleaved', liveness: 'not-always-live', category: 'Variables'}[mode];
      check(legend.includes(expect), file, `stacking by ${mode} shows ${expect} in the legend`);
      if (shots && mode !== 'category') await shot(page, path.join(shots, `${name}-memory-${mode}.png`));
    }
    // The per-tile chart is clickable too.
    const box = await page.$eval('#tile-chart', (c) => { const r = c.getBoundingClientRect(); return {x: r.left, y: r.top}; });
    await page.mouse.click(box.x + 90, box.y + 150);
    check((await page.getAttribute('#tile-detail', 'data-tile')) !== null, file, 'clicking the chart selects a tile');
    if (shots) await shot(page, path.join(shots, `${name}-memory-tile.png`));
  }

  // Liveness: the peak shown is the data's; clicking the peak step shows it.
  const live = report.liveness.notAlwaysLive;
  if (live.length) {
    await page.click('nav button[data-view="liveness"]');
    const peak = Math.max(...live);
    const shownPeak = await page.getAttribute('#liveness-peak', 'data-bytes');
    check(shownPeak === String(peak), file, `the liveness peak is the report's (${shownPeak} vs ${peak})`);
    // The peak step is shown first; clicking the first step shows it instead.
    const first = await page.evaluate(() => window.tileprofView.stepPoint(0));
    await page.mouse.click(first.x, first.y);
    const clicked = await page.getAttribute('#step-detail', 'data-step');
    check(clicked === '0' || live.length > 1000, file, `clicking the first step shows it (got ${clicked})`);
    const step = live.indexOf(peak);
    const at = await page.evaluate((i) => window.tileprofView.stepPoint(i), step);
    await page.mouse.click(at.x, at.y);
    const selected = await page.getAttribute('#step-detail', 'data-step');
    check(selected !== null && live[Number(selected)] === peak, file,
      `clicking the peak step shows a step at the peak (step ${selected})`);
    if (report.notAlwaysLiveVariables.length) {
      const liveBytes = await page.getAttribute('#step-detail', 'data-live-bytes');
      check(liveBytes === String(peak), file, `what is live at the peak sums to it (${liveBytes} vs ${peak})`);
      check((await page.$$eval('#step-live tbody tr', (r) => r.length)) > 0, file, 'the peak step lists live variables');
    }
    const program = report.programs[report.liveness.program[Number(selected)]];
    check(program && (await page.textContent('#step-detail')).includes(program.name), file,
      'the step detail names its program');
    if (shots) await shot(page, path.join(shots, `${name}-liveness-step.png`));
  }

  // Program tree: opening a node shows its children.
  if (report.programs.length) {
    await page.click('nav button[data-view="programs"]');
    const before = await page.$$eval('#program-tree li', (l) => l.length);
    const closed = await page.$('#program-tree details:not([open]) > summary');
    if (closed) {
      await closed.click();  // the toggle event comes after the click
      await page.waitForFunction((n) => document.querySelectorAll('#program-tree li').length > n, before,
        {timeout: 5000}).catch(() => {});
      const after = await page.$$eval('#program-tree li', (l) => l.length);
      check(after > before, file, `opening a program node shows its children (${before} -> ${after})`);
    }
  }

  // Operations: the totals are the report's; clicking one shows its compute sets.
  if (report.operations.length) {
    await page.click('nav button[data-view="operations"]');
    const vertices = report.operations.reduce((n, o) => n + o[2], 0);
    check((await page.getAttribute('#op-totals', 'data-vertices')) === String(vertices), file,
      'the Operations total of vertices is the report\'s');
    if (report.execution) {
      const owned = new Set(report.operations.flatMap((o) => o[7].map((cs) => report.computeSets[cs][0])));
      const cycles = report.execution.steps.filter((st) => owned.has(st.program)).reduce((n, st) => n + st.cycles, 0);
      check((await page.getAttribute('#op-totals', 'data-cycles')) === String(cycles), file,
        'the Operations total of cycles is that of the steps running them');
    }
    const busiest = report.operations.reduce((b, o, i) => (o[2] > report.operations[b][2] ? i : b), 0);
    await page.click(`#operations-table tr[data-op="${busiest}"] td`);
    check((await page.getAttribute('#op-detail', 'data-op')) === String(busiest), file, 'clicking an operation selects it');
    check((await page.$$eval('#op-compute-sets tbody tr', (r) => r.length)) === report.operations[busiest][7].length, file,
      'the operation detail lists its compute sets');
    // Its tiles: the runs the report gives, adding up to its tile count.
    const op = report.operations[busiest];
    if (op[9] !== null) {
      check((await page.getAttribute('#op-tiles', 'data-tiles')) === String(op[9]), file, 'the operation detail gives its tiles');
      const runs = await page.$$eval('#op-tile-runs tbody tr', (r) => r.length);
      check(runs === Math.min(op[10].length, 100) && runs > 0, file, `the operation detail lists its tile runs (${runs})`);
      check(op[10].reduce((n, r) => n + r[1] - r[0] + 1, 0) === op[9], file, 'the runs cover the operation\'s tiles');
      const flops = report.operations.reduce((n, o) => n + (o[5] || 0), 0);
      check((await page.getAttribute('#op-totals', 'data-flops')) === String(flops), file, 'the Operations total of FLOPs is the report\'s');
    }
    await page.fill('#op-filter', report.operations[busiest][0]);
    const shown = await page.$$eval('#operations-table tbody tr', (r) => r.filter((x) => !x.hidden).length);
    check(shown >= 1 && shown < report.operations.length, file, `the filter narrows the table (${shown})`);
    if (shots) await shot(page, path.join(shots, `${name}-operations-op.png`));
  }

  // Execution: each step split into compute, exchange and sync, and each
  // tile's split over the run when profiled per tile; click a tile.
  if (report.execution && report.execution.tiles.compute.length) {
    await page.click('nav button[data-view="execution"]');
    const split = report.execution.steps.every((st) => st.split);
    check(split, file, 'every step of a tile-level profile has its split');
    const ths = await page.$$eval('#execution-steps th', (t) => t.map((x) => x.textContent));
    check(ths.includes('sync (avg tile)'), file, 'the steps table splits compute, exchange and sync');
    // The flame by program: its root bar spans the run; clicking it names the root.
    const flame = await page.$eval('#execution-flame', (c) => { const r = c.getBoundingClientRect(); return {x: r.left, y: r.top}; });
    await page.mouse.click(flame.x + 82, flame.y + 10);
    check((await page.getAttribute('#execution-flame-detail', 'data-program')) === '0', file,
      'clicking the flame chart\'s first row names the root program');
    const box = await page.$eval('#execution-tiles', (c) => { const r = c.getBoundingClientRect(); return {x: r.left, y: r.top}; });
    await page.mouse.click(box.x + 81, box.y + 100);
    const tile = await page.getAttribute('#execution-tile-detail', 'data-tile');
    check(tile !== null && (await page.textContent('#execution-tile-detail')).includes('sync'), file,
      `clicking the per-tile chart gives a tile's split (${tile})`);
  }
  // Liveness per IPU on a report of more than one IPU.
  if (report.liveness.byIpu && report.liveness.byIpu.length > 1) {
    await page.click('nav button[data-view="liveness"]');
    check(await page.isVisible('#liveness-ipu-chart'), file, 'the Liveness view charts each IPU');
    const sums = report.liveness.notAlwaysLive.every((b, i) => report.liveness.byIpu.reduce((n, v) => n + v[i], 0) === b);
    check(sums, file, 'the IPUs\' bytes add up to each step\'s');
    check((await page.textContent('#step-detail')).includes('IPU 1: not-always-live'), file, 'the step detail gives each IPU');
  }

  // Units: the summary follows the chosen unit.
  await page.click('nav button[data-view="summary"]');
  await page.selectOption('#unit', 'MiB');
  check((await page.textContent('#summary')).includes('MiB'), file, 'the summary is in MiB once chosen');
  await page.selectOption('#unit', 'bytes');

  if (data.other) {
    // Each view compares where the other report has the data.
    if (data.other.liveness.notAlwaysLive.length && live.length) {
      await page.click('nav button[data-view="liveness"]');
      const otherPeak = Math.max(...data.other.liveness.notAlwaysLive);
      check((await page.getAttribute('#liveness-compare', 'data-bytes')) === String(otherPeak), file,
        'the Liveness view gives the compared report\'s peak');
    }
    const namesakes = new Set(data.other.operations.map((o) => o[0]));
    if (report.operations.some((o) => namesakes.has(o[0]))) {
      await page.click('nav button[data-view="operations"]');
      await page.fill('#op-filter', '');
      const deltas = await page.$$eval('#operations-table td.delta', (d) => d.length);
      check(deltas > 0, file, `the Operations view shows deltas by name (${deltas})`);
    }
    await page.click('nav button[data-view="insights"]');
    check((await page.textContent('#fit-compare')).includes('Compared report'), file, 'Insights gives the compared report\'s verdict');
    check(await page.isVisible('#insights-compare'), file, 'Insights lists the compared report\'s worst tiles');
    await page.click('nav button[data-view="programs"]');
    check((await page.$$eval('#program-kinds tbody tr', (r) => r.length)) > 0, file, 'the Program tree compares node kinds');
    if (report.tiles && data.other.tiles && report.tiles.excludingGaps.length === data.other.tiles.excludingGaps.length) {
      await page.click('nav button[data-view="memory"]');
      check(await page.isVisible('#memory-compare'), file, 'the Memory view overlays the compared report\'s tiles');
      const box = await page.$eval('#tile-chart', (c) => { const r = c.getBoundingClientRect(); return {x: r.left, y: r.top}; });
      await page.mouse.click(box.x + 81, box.y + 100);
      check((await page.textContent('#tile-detail')).includes('compared report'), file, 'a tile\'s detail gives the compared report\'s bytes');
    }
    if (report.execution && data.other.execution) {
      await page.click('nav button[data-view="execution"]');
      const shown = await page.getAttribute('#execution-compare', 'data-delta');
      check(shown === String(data.other.execution.totalCycles - report.execution.totalCycles), file,
        `the Execution view gives the change in total cycles (${shown})`);
      check((await page.$$eval('#execution-compare-programs tbody tr', (r) => r.length)) > 0, file, 'the Execution view compares cycles by program');
      check(await page.isVisible('#execution-compare-line'), file, 'the Execution chart overlays the compared run');
    }
    await page.click('nav button[data-view="compare"]');
    const deltas = await page.$$eval('#view-compare td.delta', (d) => d.length);
    check(deltas > 0, file, `the Compare view shows deltas (${deltas})`);
  }
  check(errors.length === 0, file, 'no console error: ' + errors.join(' | '));
  await context.close();
}

// `tileprof view REPORT --serve 0`: the URL it prints opens the page, whose
// data comes from the server; SIGINT stops it with status 0.
async function testServed(browser, tileprof, report) {
  const name = 'view --serve';
  const server = spawn(tileprof, ['view', report, '--serve', '0'], {stdio: ['ignore', 'pipe', 'inherit']});
  const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve({code, signal})));
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no URL printed within 60 s: ${out}`)), 60000);
      server.stdout.on('data', (d) => {
        out += d;
        const m = out.match(/^Serving the view of .* at (http:\/\/127\.0\.0\.1:\d+\/) \(Ctrl-C to stop\)$/m);
        if (m) { clearTimeout(timer); resolve(m[1]); }
      });
      exited.then(({code}) => { clearTimeout(timer); reject(new Error(`exited (${code}) before serving: ${out}`)); });
    });
    const context = await browser.newContext({viewport: {width: 1280, height: 900}});
    const page = await context.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('request', (r) => { if (!r.url().startsWith(url)) errors.push('fetched ' + r.url()); });
    page.on('response', (r) => { if (r.status() >= 400) errors.push(`${r.status()} for ${r.url()}`); });
    const fetched = page.waitForRequest(url + 'data.json');
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]', {timeout: 20000});
    check((await fetched).url() === url + 'data.json', name, 'the page fetches its data from the server');
    const data = await page.evaluate(() => window.tileprofView.data);
    check(data.report.path === report, name, `the data is the report's (${data.report.path})`);
    const visible = await page.isVisible('#view-summary');
    const content = await page.$eval('#view-summary', (s) => s.children.length);
    check(visible && content > 1, name, `the Summary view is shown with content (${visible}, ${content})`);
    const rows = await page.$$eval('#summary tbody tr', (r) => r.length);
    check(rows > 0, name, `the summary table has the report's figures (${rows} rows)`);
    if (shots) await shot(page, path.join(shots, 'served-summary.png'));
    check(errors.length === 0, name, 'no console error: ' + errors.join(' | '));
    await context.close();
  } catch (e) {
    check(false, name, String(e));
  } finally {
    server.kill('SIGINT');
    const killer = setTimeout(() => server.kill('SIGKILL'), 10000);  // SIGINT did not stop it
    const {code, signal} = await exited;
    clearTimeout(killer);
    check(code === 0, name, `the server exits with status 0 on SIGINT (${code}, ${signal})`);
  }
}

const args = process.argv.slice(2);
let serve = null;
if (args[0] === '--serve') serve = args.splice(0, 3).slice(1);
const pages = args;
if (!pages.length || (serve && serve.length !== 2)) {
  console.error('usage: node view_test.mjs [--serve TILEPROF REPORT] PAGE.html [PAGE.html ...]');
  process.exit(2);
}
const browser = await chromium.launch({executablePath: browserPath, args: ['--no-sandbox']});
try {
  for (const file of pages) await testPage(browser, file);
  if (serve) await testServed(browser, ...serve);
} finally {
  await browser.close();
}
for (const f of failures) console.error('FAIL ' + f);
console.log(`${pages.length + (serve ? 1 : 0)} pages, ${failures.length} failures`);
process.exit(failures.length ? 1 : 0);

// Screenshots of each view (see screenshots.sh): node screenshots.mjs PAGES_DIR OUT_DIR.
import {createRequire} from 'node:module';
const require = createRequire(import.meta.url);
const {chromium} = require('playwright-core');
const [pages, out] = process.argv.slice(2);
const browser = await chromium.launch({executablePath: '/usr/bin/chromium', args: ['--no-sandbox']});
const page = await browser.newPage({viewport: {width: 1280, height: 800}});
async function open(file) { await page.goto('file://' + pages + '/' + file); await page.waitForSelector('body[data-ready="1"]'); }
async function snap(name) { await page.evaluate(() => window.scrollTo(0, 0)); await page.screenshot({path: `${out}/${name}.png`}); }
await open('mnist.html');
await snap('summary');
await page.click('nav button[data-view="memory"]');
const d = await page.evaluate(() => window.tileprofView.data.report.tiles.excludingGaps);
const t = d.indexOf(Math.max(...d));
const at = await page.evaluate((x) => window.tileprofView.tilePoint(x), t);
await page.mouse.click(at.x, at.y);
await page.screenshot({path: `${out}/memory-tile.png`});
await page.evaluate(() => window.scrollTo(0, 0)); await snap('memory');
await page.click('nav button[data-view="liveness"]'); await snap('liveness');
await page.evaluate(() => document.getElementById('step-detail').scrollIntoView());
await page.screenshot({path: `${out}/liveness-step.png`});
await page.click('nav button[data-view="programs"]'); await snap('program-tree');
await page.click('nav button[data-view="operations"]');
await page.click('#operations-table tbody tr td'); await snap('operations');
await page.click('nav button[data-view="execution"]'); await snap('execution');
await open('oom.html');
await page.click('nav button[data-view="insights"]'); await snap('oom-insights');
await page.click('nav button[data-view="liveness"]'); await snap('oom-liveness');
await open('compare.html');
await page.click('nav button[data-view="liveness"]'); await snap('compare-liveness');
await page.click('nav button[data-view="operations"]'); await snap('compare-operations');
await page.click('nav button[data-view="compare"]'); await snap('compare');
await browser.close();

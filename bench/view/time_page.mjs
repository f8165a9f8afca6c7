// Load and Memory-view times of one view page in headless Chromium (see run.sh).
import {createRequire} from 'node:module';
import path from 'node:path';
const require = createRequire(path.join(process.env.NODE_PATH, 'x.js'));
const {chromium} = require('playwright-core');

const [file, runs] = [process.argv[2], Number(process.argv[3] || 3)];
const browser = await chromium.launch({executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox']});
let best = {load: Infinity, memory: Infinity};
for (let r = 0; r < runs; r++) {
  const page = await browser.newPage({viewport: {width: 1280, height: 900}});
  const t0 = Date.now();
  await page.goto('file://' + path.resolve(file));
  await page.waitForSelector('body[data-ready="1"]', {timeout: 60000});
  const t1 = Date.now();
  await page.click('nav button[data-view="memory"]');
  const at = await page.evaluate(() => window.tileprofView.tilePoint(94207));
  await page.mouse.click(at.x, at.y);
  await page.waitForSelector('#tile-detail[data-tile="94207"]', {timeout: 60000});
  const t2 = Date.now();
  best = {load: Math.min(best.load, (t1 - t0) / 1000), memory: Math.min(best.memory, (t2 - t1) / 1000)};
  await page.close();
}
await browser.close();
console.log(`headless Chromium, best of ${runs}: page ready ${best.load.toFixed(2)} s, ` +
  `Memory view drawn and a tile clicked ${best.memory.toFixed(2)} s, ` +
  `open to interactive ${(best.load + best.memory).toFixed(2)} s`);

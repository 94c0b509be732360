// asdftool view driven by headless Chromium as a person would use it (issue 30 item 4): the
// page loads, shows the file's top-level keys, a node expands, search finds a value, an image
// preview loads with non-blank pixels, a path outside the folder is refused.
//
//   node asdf-cli/tests/browser/view.mjs target/debug/asdftool
//
// Needs Debian's chromium (/usr/bin/chromium, or $CHROMIUM) and `npm ci` in this folder
// (playwright-core, pinned in package-lock.json; it downloads no browser). Expected values come
// from the example's generator and its oracle sidecar (examples/data/make_example.py,
// observation.expect.json, written by python asdf 6.0.0).
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../../..");
const asdftool = resolve(process.argv[2] ?? join(repo, "target/debug/asdftool"));
const browser = process.env.CHROMIUM ?? "/usr/bin/chromium";

const work = mkdtempSync(join(tmpdir(), "asdftool-view-browser-"));
const served = join(work, "served");
mkdirSync(served);
const example = join(repo, "examples/data/observation.asdf");
copyFileSync(example, join(served, "observation.asdf"));
copyFileSync(example, join(work, "secret.asdf"));
const oracle = JSON.parse(readFileSync(join(repo, "examples/data/observation.expect.json"), "utf8"));
const topKeys = Object.keys(oracle.tree.value).sort();

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok: ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAILED: ${name}: ${e.stack ?? e}`);
  }
}
function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

// The server, on a free port read from its first line.
const server = spawn(asdftool, ["view", served, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
const port = await new Promise((ok, fail) => {
  let text = "";
  server.stdout.on("data", (d) => {
    text += d;
    const m = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(text);
    if (m) ok(Number(m[1]));
  });
  server.on("exit", (code) => fail(new Error(`asdftool view exited (${code}): ${text}`)));
  setTimeout(() => fail(new Error(`no port from asdftool view in 30 s: ${text}`)), 30000);
});
const base = `http://127.0.0.1:${port}`;

const context = await chromium.launchPersistentContext(join(work, "profile"), {
  executablePath: browser,
  headless: true,
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
const page = context.pages()[0] ?? (await context.newPage());
const pageErrors = [];
page.on("pageerror", (e) => pageErrors.push(String(e)));
page.on("console", (m) => {
  // a refused request is the test's own doing (403 below); anything else is a fault
  if (m.type() === "error" && !/status of 403/.test(m.text())) pageErrors.push(m.text());
});

try {
  await check("the page loads and shows the file's top-level keys", async () => {
    const response = await page.goto(`${base}/#observation.asdf`);
    assert(response.status() === 200, `status ${response.status()}`);
    await page.locator('li.node[data-path="/meta"]').waitFor({ state: "visible", timeout: 30000 });
    const shown = await page.$$eval("#tree > li > details > ul > li", (lis) => lis.map((li) => li.querySelector(".key").textContent));
    assert(JSON.stringify([...shown].sort()) === JSON.stringify(topKeys), `keys ${shown} vs ${topKeys}`);
    for (const k of topKeys) {
      assert(await page.locator(`li.node[data-path="/${k}"]`).isVisible(), `${k} not visible`);
    }
    const listed = await page.locator("#files a").allTextContents();
    assert(listed.length === 1 && listed[0].startsWith("observation.asdf"), `files ${listed}`);
  });

  await check("a node expands", async () => {
    assert(!(await page.locator('li.node[data-path="/meta/instrument"]').count()), "expanded before the click");
    await page.locator('li.node[data-path="/meta"] > details > summary').click();
    const instrument = page.locator('li.node[data-path="/meta/instrument"]');
    await instrument.waitFor({ state: "visible" });
    await instrument.locator(":scope > details > summary").click();
    const filter = page.locator('li.node[data-path="/meta/instrument/filter"]');
    await filter.waitFor({ state: "visible" });
    const text = await filter.textContent();
    assert(text.includes("filter") && text.includes('"F200W"'), `filter line ${text}`);
  });

  await check("search finds a value", async () => {
    await page.fill("#search", "imager");
    const hit = page.locator("#results .hit", { hasText: "/meta/instrument/name" });
    await hit.waitFor({ state: "visible" });
    await page.fill("#search", "");
  });

  await check("an array's statistics and image preview (non-blank pixels)", async () => {
    await page.locator('li.node[data-path="/sci"] > details > summary').click();
    const panel = page.locator('li.node[data-path="/sci"] .array');
    await panel.waitFor({ state: "visible" });
    const summary = await panel.locator("table").textContent();
    assert(summary.includes("float32") && summary.includes("(64, 64)") && summary.includes("zlib"), `summary ${summary}`);
    await panel.locator("button.stats").click();
    await page.waitForFunction(() => /NaN 0, finite 4096 of 4096/.test(document.querySelector('li.node[data-path="/sci"] .stats-out')?.textContent ?? ""), null, { timeout: 30000 });
    await panel.locator("button.show").click();
    const img = panel.locator("img.preview");
    await img.waitFor({ state: "visible", timeout: 60000 });
    const pixels = await img.evaluate((el) => {
      const c = document.createElement("canvas");
      c.width = el.naturalWidth;
      c.height = el.naturalHeight;
      const g = c.getContext("2d");
      g.drawImage(el, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      const grey = new Set();
      let lit = 0;
      for (let i = 0; i < d.length; i += 4) {
        grey.add(d[i]);
        if (d[i] + d[i + 1] + d[i + 2] > 0) lit++;
      }
      return { w: c.width, h: c.height, distinct: grey.size, lit, total: d.length / 4 };
    });
    assert(pixels.w === 64 && pixels.h === 64, `size ${pixels.w} x ${pixels.h}`);
    // zscale of normal noise: a spread of grey levels, most pixels not black
    assert(pixels.distinct > 50, `only ${pixels.distinct} grey levels`);
    assert(pixels.lit > pixels.total / 2, `${pixels.lit} of ${pixels.total} pixels lit`);
  });

  await check("a path outside the folder is refused", async () => {
    const r = await page.request.get(`${base}/api/tree?file=${encodeURIComponent("../secret.asdf")}`);
    assert(r.status() === 403, `status ${r.status()}`);
    await page.goto(`${base}/#${encodeURIComponent("../secret.asdf")}`);
    await page.waitForFunction(() => /^403: /.test(document.getElementById("status").textContent), null, { timeout: 30000 });
    assert((await page.locator("#tree li").count()) === 0, "a tree was shown");
  });

  await check("no script error or policy violation on the page", async () => {
    assert(pageErrors.length === 0, pageErrors.join("\n"));
  });
} finally {
  await context.close();
  server.kill();
  rmSync(work, { recursive: true, force: true });
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

// Opens the analyzer's on-call page in Debian's chromium (headless, driven by
// playwright-core) and reports what a person would see, as JSON lines on
// stdout, for tests/e2e/test_prometheus.py to assert on:
//   1. {"phase":"live", ...}: the page once it shows live data: cards, the
//      fabric picture's marked cells, incident rows (with their diagnosis)
//      and timeline bars, table rows and headers, every RNIC's row (the box
//      opened as a person would), script errors; a full-page screenshot.
//   2. {"phase":"incident", ...}: the first open incident's own page, opened
//      from its row's link: timeline lines, groups, paths, verdicts, counters,
//      flight-recorder events, script errors; a screenshot.
//   3. after a line on stdin (the test has made the analyzer unreachable):
//      {"phase":"unreachable", ...}: badge, banner, whether the last data is
//      still shown (greyed); a second screenshot.
// Usage: node oncall_page.mjs URL OUT_DIR
import { chromium } from "playwright-core";
import { createInterface } from "node:readline";
import { join } from "node:path";

const [url, outDir] = process.argv.slice(2);
const executablePath = process.env.HOSTMESH_CHROMIUM || "/usr/bin/chromium";
const errors = [];

// Read what the page shows, from the DOM only.
function facts() {
  const text = e => (e ? e.textContent.trim() : null);
  const cells = cls => [...document.querySelectorAll(".cell." + cls)]
      .map(c => c.dataset.link || c.dataset.rnic).filter(Boolean);
  const rows = id => [...document.querySelectorAll("#" + id + " tbody tr")]
      .map(tr => [...tr.children].map(td => td.textContent.trim()));
  const heads = id => [...document.querySelectorAll("#" + id + " thead th")]
      .map(th => th.textContent.trim());
  const cards = {};
  for (const c of document.querySelectorAll("#cards .card")) cards[text(c.querySelector(".k"))] =
      text(c.querySelector(".v"));
  return {
    badge: text(document.getElementById("badge")),
    stale: document.getElementById("main").classList.contains("stale"),
    banner: getComputedStyle(document.getElementById("banner")).display === "none"
        ? null : text(document.getElementById("banner")),
    cards,
    pictures: [...document.querySelectorAll("#fabric .picture h3")].map(text),
    cells: document.querySelectorAll("#fabric .cell").length,
    culprit: cells("culprit"), hotspot: cells("hotspot"), blind: cells("blind"),
    rnic_down: cells("down"), rnic_lossy: cells("lossy"),
    incidents: rows("incidents"),
    timeline_open: [...document.querySelectorAll(".tl-bar.open")].map(b => b.title),
    timeline_windows: document.querySelectorAll(".tl-win").length,
    incident_heads: heads("incidents"),
    rnics: rows("rnics"), links: rows("links"), sla: rows("sla"),
    all_rnics: rows("all-rnics"), all_rnic_heads: heads("all-rnics"),
    counts: Object.fromEntries([...document.querySelectorAll("h2 .n")].map(n => [n.id, text(n)])),
  };
}

// What the incident page shows, from the DOM only.
function incidentFacts() {
  const text = e => (e ? e.textContent.trim() : null);
  const rows = id => [...document.querySelectorAll("#" + id + " tbody tr")]
      .map(tr => [...tr.children].map(td => td.textContent.trim()));
  const lines = {};
  for (const l of document.querySelectorAll("#timeline-svg polyline.ln")) {
    const kind = [...l.classList].find(c => c !== "ln");
    lines[kind] = (lines[kind] || 0) + 1;
  }
  return {
    badge: text(document.getElementById("badge")),
    title: text(document.getElementById("title")),
    diagnosis: text(document.getElementById("diagnosis")),
    lines,
    marks: [...document.querySelectorAll("#timeline-svg line.mark")]
        .map(m => [...m.classList].find(c => c !== "mark")),
    groups: rows("groups"), paths: rows("paths"), verdicts: rows("verdicts"),
    counters: rows("counters"), flight: rows("flight"),
    suspect_hops: document.querySelectorAll("#path-svg rect.hop.suspect").length,
    n: Object.fromEntries([...document.querySelectorAll("h2 .n")].map(n => [n.id, text(n)])),
  };
}

const browser = await chromium.launch({
  executablePath, headless: true, chromiumSandbox: false,
  args: ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on("pageerror", e => errors.push("pageerror: " + e.message));
  page.on("console", m => { if (m.type() === "error") errors.push("console: " + m.text()); });
  await page.goto(url);
  await page.waitForSelector("#badge.live", { timeout: 30000 });
  await page.waitForSelector("#fabric .picture, #fabric .empty", { timeout: 10000 });
  await page.click("#all-rnics-summary");  // every RNIC, drawn only while open
  await page.waitForSelector("#all-rnics table, #all-rnics .empty", { timeout: 10000 });
  await page.screenshot({ path: join(outDir, "oncall-faulty.png"), fullPage: true });
  console.log(JSON.stringify({ phase: "live", errors: errors.splice(0), ...await page.evaluate(facts) }));

  // 2. The first incident's own page, opened from its row's link in a tab of its own.
  const href = await page.$eval("#incidents tbody a", a => a.href);
  const drill = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const drillErrors = [];
  drill.on("pageerror", e => drillErrors.push("pageerror: " + e.message));
  drill.on("console", m => { if (m.type() === "error") drillErrors.push("console: " + m.text()); });
  await drill.goto(href);
  await drill.waitForSelector("#badge.live", { timeout: 30000 });
  await drill.waitForSelector("#timeline-svg", { timeout: 10000 });
  await drill.screenshot({ path: join(outDir, "incident-drilldown.png"), fullPage: true });
  await drill.screenshot({ path: join(outDir, "incident-drilldown-top.png") });
  console.log(JSON.stringify({ phase: "incident", url: drill.url(), errors: drillErrors,
                               ...await drill.evaluate(incidentFacts) }));
  await drill.close();

  const lines = createInterface({ input: process.stdin });
  await new Promise(resolve => lines.once("line", resolve));
  // The page polls every 10 s and gives up on a request after 5 s.
  await page.waitForSelector("#badge.down", { timeout: 30000 });
  await page.screenshot({ path: join(outDir, "oncall-unreachable.png"), fullPage: true });
  // Failed fetches log "net::ERR_..." to the console: expected now, not a script error.
  const scriptErrors = errors.filter(e => !e.includes("net::ERR_") && !e.includes("Failed to load"));
  console.log(JSON.stringify({ phase: "unreachable", errors: scriptErrors,
                               ...await page.evaluate(facts) }));
  lines.close();
} finally {
  await browser.close();  // and its temporary profile
}

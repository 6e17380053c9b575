"""The page's JavaScript, kept as strings beside the Python that passes them to Gradio. None of it
builds HTML from data: titles go in with `textContent`, points are drawn on a canvas."""

# Runs once when the page loads (Blocks.launch(js=…)): a click on a citation marker selects its
# card in the sources panel (the panel already shows the clicked answer's sources).
PAGE = """
() => {
  window.__ragCite = true;
  document.addEventListener('click', (event) => {
    const link = event.target.closest && event.target.closest('a.cite');
    if (!link) return;
    event.preventDefault();
    const id = (link.getAttribute('href') || '').replace(/^#/, '');
    const pick = () => {
      const card = document.getElementById(id);
      if (!card) return false;
      document.querySelectorAll('.source-card.selected').forEach((c) => c.classList.remove('selected'));
      card.classList.add('selected');
      card.scrollIntoView({block: 'nearest'});
      return true;
    };
    if (!pick()) setTimeout(pick, 400);
  }, true);
}
"""

# "Copy answer": the button's js= handler; its input is the hidden box holding the answer's Markdown.
COPY = """
(text) => {
  if (!text) return text;
  const fallback = () => {
    const area = document.createElement('textarea');
    area.value = text; document.body.appendChild(area); area.select();
    try { document.execCommand('copy'); } finally { area.remove(); }
  };
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).catch(fallback);
  else fallback();
  window.__ragCopied = text;
  return text;
}
"""

# The lookup table (gr.HTML): a click or Enter on a row asks the server for that paper.
LOOKUP = """
const open = (row) => { if (row && row.dataset.id) { element.querySelectorAll('tr.picked').forEach((r) => r.classList.remove('picked')); row.classList.add('picked'); trigger('select', {paper_id: row.dataset.id}); } };
element.addEventListener('click', (event) => open(event.target.closest('tr[data-id]')));
element.addEventListener('keydown', (event) => { if (event.key === 'Enter') open(event.target.closest('tr[data-id]')); });
"""

MAP_TEMPLATE = """
<div class="map-wrap">
  <div class="map-caption"></div>
  <canvas class="map" aria-label="map of the papers"></canvas>
  <div class="map-tip" hidden></div>
  <div class="map-legend"></div>
</div>
"""

# The map (gr.HTML, value = ui.render.map_payload): one canvas, one path per cluster colour, so
# 7,000 points draw in a few milliseconds; hover and click find the nearest point.
MAP = """
const R = 2.6, PAD = 22;
let view = null, titles = null, asked = '';
function loadTitles(gen) {
  if ((titles && titles.gen === gen) || asked === gen) return;
  asked = gen;
  server.map_titles(gen).then((got) => { titles = got; element.dataset.titles = String(got.t.length); });
}
function titleOf(i) {
  for (const [j, , title] of view.data.hl) if (j === i) return title;
  return titles && titles.gen === view.data.gen ? titles.t[i] : '…';
}
const canvas = () => element.querySelector('canvas.map');
const tip = () => element.querySelector('.map-tip');
function draw() {
  const data = props.value, c = canvas();
  if (!c || !data || !data.x) return;
  const t0 = performance.now();
  const w = c.clientWidth, h = c.clientHeight;
  if (!w || !h) return;  // a hidden tab: drawn when it is shown (ResizeObserver)
  const dpr = window.devicePixelRatio || 1;
  c.width = Math.round(w * dpr); c.height = Math.round(h * dpr);
  const ctx = c.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  const n = data.x.length, k = data.colors.length;
  const px = new Float32Array(n), py = new Float32Array(n);
  const sx = (w - 2 * PAD) / 10000, sy = (h - 2 * PAD) / 10000;
  for (let i = 0; i < n; i++) { px[i] = PAD + data.x[i] * sx; py[i] = PAD + (10000 - data.y[i]) * sy; }
  ctx.fillStyle = 'rgba(150, 150, 150, 0.28)';
  for (let i = 0; i < n; i++) if (!data.on[i]) ctx.fillRect(px[i] - 1, py[i] - 1, 2, 2);
  const groups = new Map();
  for (let i = 0; i < n; i++) if (data.on[i]) { const g = groups.get(data.c[i]); if (g) g.push(i); else groups.set(data.c[i], [i]); }
  const focused = data.hl.length > 0;  // an answer or lookup is shown: the rest steps back
  ctx.globalAlpha = focused ? 0.5 : 0.8;
  for (const [cluster, members] of groups) {
    ctx.fillStyle = data.colors[cluster % k];
    ctx.beginPath();
    for (const i of members) { ctx.moveTo(px[i] + R, py[i]); ctx.arc(px[i], py[i], R, 0, 6.2832); }
    ctx.fill();
  }
  ctx.globalAlpha = 1;
  ctx.fillStyle = '#ffffff';
  ctx.beginPath();
  for (let i = 0; i < n; i++) if (data.on[i] && !data.e[i]) { ctx.moveTo(px[i] + 1.1, py[i]); ctx.arc(px[i], py[i], 1.1, 0, 6.2832); }
  ctx.fill();
  ctx.textAlign = 'center'; ctx.textBaseline = 'middle'; ctx.lineJoin = 'round';
  ctx.font = '600 12px system-ui, sans-serif';
  const placed = placeLabels(ctx, data.labels, w, h);
  for (const {text, x, y} of placed) {
    ctx.lineWidth = 4; ctx.strokeStyle = 'rgba(255, 255, 255, 0.94)'; ctx.strokeText(text, x, y);
    ctx.fillStyle = '#111827'; ctx.fillText(text, x, y);
  }
  element.dataset.labelBoxes = JSON.stringify(placed.map((p) => p.box.map((v) => Math.round(v))));
  for (const [i, label] of data.hl) if (!label) {  // retrieved, not cited: a ring
    ctx.beginPath(); ctx.arc(px[i], py[i], 7, 0, 6.2832);
    ctx.fillStyle = '#ffffff'; ctx.fill(); ctx.lineWidth = 3; ctx.strokeStyle = '#111827'; ctx.stroke();
  }
  ctx.font = '700 12px system-ui, sans-serif';
  for (const [i, label] of data.hl) if (label) {  // cited (or a lookup's first results): numbered
    ctx.beginPath(); ctx.arc(px[i], py[i], 17, 0, 6.2832);
    ctx.fillStyle = 'rgba(245, 158, 11, 0.28)'; ctx.fill();  // a halo that finds the eye
    ctx.beginPath(); ctx.arc(px[i], py[i], 11, 0, 6.2832);
    ctx.fillStyle = '#111827'; ctx.fill(); ctx.lineWidth = 3; ctx.strokeStyle = '#f59e0b'; ctx.stroke();
    ctx.fillStyle = '#ffffff'; ctx.fillText(label, px[i], py[i] + 0.5);
  }
  view = {px, py, n, data};
  const caption = element.querySelector('.map-caption');
  if (caption) caption.textContent = data.caption || '';
  const legend = element.querySelector('.map-legend');
  if (legend && legend.dataset.gen !== data.gen) {
    legend.replaceChildren(...data.labels.map((l) => {
      const item = document.createElement('span'), dot = document.createElement('span');
      dot.className = 'dot'; dot.style.background = l.color;
      item.append(dot, document.createTextNode(`${l.text} (${l.size})`));
      return item;
    }), ...(data.e.includes(0) ? [Object.assign(document.createElement('span'), {className: 'hollow',
      textContent: '◦ hollow: no abstract, placed by its title'})] : []));
    legend.dataset.gen = data.gen;
  }
  element.dataset.drawn = String(n);
  element.dataset.shown = String(data.shown);
  element.dataset.highlighted = String(data.hl.length);
  element.dataset.drawMs = (performance.now() - t0).toFixed(1);
  element.dataset.drawnAt = performance.now().toFixed(0);
  loadTitles(data.gen);
}
// Cluster names where they do not cover each other: largest cluster first, each at the first of a
// ring of spots around its centre whose box overlaps no name placed before (else the spot that
// overlaps least), kept inside the canvas.
function placeLabels(ctx, labels, w, h) {
  const boxes = [], out = [], LH = 15;
  const order = labels.map((_, j) => j).sort((a, b) => labels[b].size - labels[a].size);
  const overlap = (a, b) => Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])) * Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  for (const j of order) {
    const label = labels[j], half = ctx.measureText(label.text).width / 2 + 3;
    const cx = PAD + label.x * (w - 2 * PAD), cy = PAD + (1 - label.y) * (h - 2 * PAD);
    let best = null;
    for (let ring = 0; ring <= 6 && !(best && best.cost === 0); ring++) {
      const spots = ring === 0 ? [[0, 0]] : [[0, -ring * LH], [0, ring * LH], [-half * ring * 0.6, 0], [half * ring * 0.6, 0],
        [-half * 0.5 * ring, -ring * LH], [half * 0.5 * ring, -ring * LH], [-half * 0.5 * ring, ring * LH], [half * 0.5 * ring, ring * LH]];
      for (const [dx, dy] of spots) {
        const x = Math.min(Math.max(cx + dx, half + 2), w - half - 2), y = Math.min(Math.max(cy + dy, LH), h - LH);
        const box = [x - half, y - LH / 2, x + half, y + LH / 2];
        const cost = boxes.reduce((sum, other) => sum + overlap(box, other), 0);
        if (!best || cost < best.cost) best = {x, y, box, cost};
        if (best.cost === 0) break;
      }
    }
    boxes.push(best.box);
    out.push({text: label.text, x: best.x, y: best.y, box: best.box});
  }
  return out;
}
function nearest(event) {
  if (!view) return -1;
  const r = canvas().getBoundingClientRect(), x = event.clientX - r.left, y = event.clientY - r.top;
  let best = -1, bestD = 144;
  for (const [i] of view.data.hl) { const d = (view.px[i] - x) ** 2 + (view.py[i] - y) ** 2; if (d < bestD) { bestD = d; best = i; } }
  if (best >= 0) return best;
  bestD = 49;
  for (let i = 0; i < view.n; i++) {
    const d = (view.px[i] - x) ** 2 + (view.py[i] - y) ** 2 + (view.data.on[i] ? 0 : 12);
    if (d < bestD) { bestD = d; best = i; }
  }
  return best;
}
element.addEventListener('mousemove', (event) => {
  const t = tip(), c = canvas();
  if (!t || !c || event.target !== c) return;
  const i = nearest(event);
  if (i < 0) { t.hidden = true; c.style.cursor = ''; return; }
  t.textContent = titleOf(i) + (view.data.e[i] ? '' : ' (title only)');
  t.hidden = false;
  const r = c.getBoundingClientRect();
  t.style.left = Math.min(view.px[i] + 12, r.width - 260) + 'px';
  t.style.top = (view.py[i] + 14 + c.offsetTop) + 'px';
  c.style.cursor = 'pointer';
});
element.addEventListener('mouseleave', () => { const t = tip(); if (t) t.hidden = true; });
element.addEventListener('click', (event) => {
  if (event.target !== canvas()) return;
  const i = nearest(event);
  if (i >= 0) trigger('select', {index: i, gen: view.data.gen});
});
window.__ragMap = {  // for tests and the benchmark: where a point is drawn, what is highlighted
  highlighted() { return view ? view.data.hl.map(([index, label, title]) => ({index, label, title})) : []; },
  pointOf(i) {
    if (!view || i < 0 || i >= view.n) return null;
    const r = canvas().getBoundingClientRect();
    return {x: r.left + view.px[i], y: r.top + view.py[i]};
  },
};
watch('value', () => { element.dataset.valueAt = performance.now().toFixed(0); draw(); });
new ResizeObserver(() => requestAnimationFrame(draw)).observe(element);
requestAnimationFrame(draw);
"""

// asdftool view: the page. Plain DOM, no build step. Everything from a file (keys, values,
// tags, messages) goes into the page as text (textContent), never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
let current = null; // { file, doc, byPath: Map(pointer -> li) }

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function status(msg) {
  $("status").textContent = msg || "";
}

async function getJSON(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${r.status}: ${(await r.text()).trim()}`);
  return r.json();
}

function q(params) {
  return Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== "")
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
}

// JSON pointer segment escaping (RFC 6901)
const seg = (k) => String(k).replace(/~/g, "~0").replace(/\//g, "~1");

function sizeText(n) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${u[i]}`;
}

function scalarText(node) {
  const v = node.value;
  if (node.kind === "string") return JSON.stringify(v);
  if (node.kind === "binary") return `<${v} bytes>`;
  if (node.kind === "recursive") return `*${v} (recursive)`;
  return String(v);
}

function shortTag(t) {
  return t.replace(/^tag:stsci\.edu:asdf\//, "");
}

function isArray(node) {
  return node.kind === "ndarray" || node.kind === "zarr";
}

function arrayLine(node) {
  if (node.error) return `invalid array: ${node.error}`;
  const shape = node.shape ? `(${node.shape.join(", ")})` : "(from data)";
  let s = `${node.datatype ?? "inferred"} ${shape}, ${node.storage}`;
  if (node.compression && node.compression !== "none") s += `, ${node.compression}`;
  if (node.compressor) s += `, ${node.compressor}`;
  if (node.masked) s += ", masked";
  return s;
}

// One node of the outline: an li with a details (collections, arrays) or a line (scalars).
function renderNode(name, node, path) {
  const li = el("li", "node");
  li.dataset.path = path;
  current.byPath.set(path, li);
  const label = (parent) => {
    if (name !== null) parent.append(el("span", "key", name), ": ");
    if (node.tag) parent.append(el("span", "tag", `!${shortTag(node.tag)}`), " ");
  };
  const collection = node.kind === "mapping" || node.kind === "sequence";
  if (!collection && !isArray(node)) {
    label(li);
    li.append(el("span", "val", scalarText(node)));
    return li;
  }
  const details = el("details");
  const summary = el("summary");
  label(summary);
  if (isArray(node)) {
    summary.append(el("span", "kind", arrayLine(node)));
  } else if (node.kind === "mapping") {
    summary.append(el("span", "kind", `{${Object.keys(node.children).length} keys}`));
  } else {
    summary.append(el("span", "kind", `[${node.items.length} items]`));
  }
  details.append(summary);
  let filled = false;
  details.addEventListener("toggle", () => {
    if (!details.open || filled) return;
    filled = true;
    if (isArray(node)) {
      details.append(arrayPanel(node, path));
      return;
    }
    const ul = el("ul", "tree");
    if (node.kind === "mapping") {
      for (const [k, v] of Object.entries(node.children)) ul.append(renderNode(k, v, `${path}/${seg(k)}`));
    } else {
      node.items.forEach((v, i) => ul.append(renderNode(String(i), v, `${path}/${i}`)));
    }
    details.append(ul);
  });
  li.append(details);
  return li;
}

function select(name, options) {
  const s = el("select");
  s.name = name;
  s.setAttribute("aria-label", name);
  for (const o of options) s.append(el("option", null, o));
  return s;
}

// An array's summary, statistics on demand, and its preview.
function arrayPanel(node, path) {
  const box = el("div", "array");
  const table = el("table");
  const row = (k, v) => {
    const tr = el("tr");
    tr.append(el("th", null, k), el("td", null, v));
    table.append(tr);
  };
  row("path", path);
  if (node.error) row("error", node.error);
  if (node.datatype !== undefined) row("datatype", String(node.datatype ?? "inferred"));
  if (node.shape) row("shape", `(${node.shape.join(", ")})`);
  if (node.storage) row("storage", node.storage + (node.block !== undefined ? ` (block ${node.block})` : ""));
  if (node.source) row("source", node.source);
  row("codec", node.compression ?? node.compressor ?? "none");
  if (node.chunks) row("chunks", `(${node.chunks.join(", ")})`);
  if (node.offset) row("offset", String(node.offset));
  if (node.strides) row("strides", `(${node.strides.join(", ")})`);
  if (node.masked) row("masked", "yes");
  box.append(table);

  const controls = el("div", "controls");
  const statsBtn = el("button", "stats", "statistics");
  const statsOut = el("div", "stats-out");
  statsBtn.addEventListener("click", async () => {
    statsOut.textContent = "computing…";
    try {
      const s = await getJSON(`/api/stats?${q({ file: current.file, path })}`);
      const fmt = (x) => (x === null ? "none" : String(x));
      statsOut.textContent =
        `min ${fmt(s.min)}, max ${fmt(s.max)}, mean ${fmt(s.mean)}, NaN ${s.nan}, finite ${s.finite} of ${s.count}`;
    } catch (e) {
      statsOut.textContent = e.message;
    }
  });
  const interval = select("interval", ["zscale", "minmax", "percent"]);
  const stretch = select("stretch", ["linear", "asinh", "log", "sqrt"]);
  const cmap = select("cmap", ["grey", "viridis", "inferno", "heat", "cool"]);
  const slice = el("input");
  slice.name = "slice";
  slice.placeholder = "plane (e.g. 0)";
  slice.size = 10;
  const showBtn = el("button", "show", "preview");
  controls.append(statsBtn, interval, stretch, cmap);
  if (node.shape && node.shape.length > 2) controls.append(slice);
  controls.append(showBtn);
  const img = el("img", "preview");
  img.alt = `preview of ${path}`;
  img.hidden = true;
  const imgErr = el("div", "preview-error");
  img.addEventListener("error", async () => {
    img.hidden = true;
    try {
      const r = await fetch(img.src);
      imgErr.textContent = `${r.status}: ${(await r.text()).trim()}`;
    } catch (e) {
      imgErr.textContent = e.message;
    }
  });
  img.addEventListener("load", () => { img.hidden = false; imgErr.textContent = ""; });
  showBtn.addEventListener("click", () => {
    imgErr.textContent = "drawing…";
    img.src = `/api/preview?${q({
      file: current.file, path, interval: interval.value, stretch: stretch.value,
      cmap: cmap.value, slice: slice.value.trim(),
    })}`;
  });
  box.append(controls, statsOut, imgErr, img);
  return box;
}

function renderHdus(hdus) {
  const box = $("hdus");
  box.replaceChildren();
  if (!hdus) return;
  box.append(el("h2", null, `FITS HDUs: ${hdus.length}`));
  const table = el("table");
  const head = el("tr");
  for (const h of ["#", "name", "ver", "kind", "shape", "BITPIX", "header at byte", "data bytes"]) head.append(el("th", null, h));
  table.append(head);
  for (const h of hdus) {
    const tr = el("tr", "hdu");
    for (const v of [h.index, h.name, h.ver, h.kind, h.shape.length ? `(${h.shape.join(", ")})` : "no data", h.bitpix, h.header_offset, h.data_len]) {
      tr.append(el("td", null, String(v)));
    }
    table.append(tr);
  }
  box.append(table);
}

// Search: keys and scalar values containing the text (case-insensitive), at most 200.
function search(text) {
  const out = $("results");
  out.replaceChildren();
  if (!current || !text) { out.hidden = true; return; }
  const needle = text.toLowerCase();
  const hits = [];
  const walk = (name, node, path) => {
    if (hits.length >= 200) return;
    const scalar = !isArray(node) && node.kind !== "mapping" && node.kind !== "sequence";
    const inKey = name !== null && name.toLowerCase().includes(needle);
    const inVal = scalar && scalarText(node).toLowerCase().includes(needle);
    if (inKey || inVal) hits.push([path, scalar ? scalarText(node) : isArray(node) ? arrayLine(node) : node.kind]);
    if (node.kind === "mapping") for (const [k, v] of Object.entries(node.children)) walk(k, v, `${path}/${seg(k)}`);
    if (node.kind === "sequence") node.items.forEach((v, i) => walk(String(i), v, `${path}/${i}`));
  };
  walk(null, current.doc.tree, "");
  out.append(el("p", "muted", `${hits.length}${hits.length >= 200 ? "+" : ""} matches`));
  for (const [path, what] of hits) {
    const d = el("div", "hit");
    d.append(el("span", "key", path || "/"), " ", el("span", "val", what));
    d.addEventListener("click", () => reveal(path));
    out.append(d);
  }
  out.hidden = false;
}

// Opens the outline down to `path` and scrolls to it.
function reveal(path) {
  const parts = path.split("/").slice(1);
  let prefix = "";
  for (let i = 0; i <= parts.length; i++) {
    const li = current.byPath.get(prefix);
    if (!li) break;
    const d = li.querySelector(":scope > details");
    if (d && !d.open && i < parts.length) d.open = true; // the toggle event fills it in
    if (i === parts.length) {
      li.scrollIntoView({ block: "center" });
      li.classList.add("hit");
    }
    if (i < parts.length) {
      // the toggle event is asynchronous: fill synchronously by dispatching it
      if (d && d.open && !d.querySelector(":scope > ul, :scope > .array")) d.dispatchEvent(new Event("toggle"));
      prefix += `/${parts[i]}`;
    }
  }
}

async function openFile(file) {
  status("");
  for (const a of document.querySelectorAll("#files a")) a.classList.toggle("current", a.dataset.file === file);
  $("tree").replaceChildren();
  $("meta").textContent = `loading ${file}…`;
  $("hdus").replaceChildren();
  $("results").hidden = true;
  try {
    const doc = await getJSON(`/api/tree?${q({ file })}`);
    current = { file, doc, byPath: new Map() };
    $("meta").textContent =
      `${doc.file} (${doc.format}; ASDF ${doc.asdf_version ?? "none"}, standard ${doc.standard_version ?? "unknown"})`;
    const root = renderNode(null, doc.tree, "");
    root.querySelector("summary")?.prepend(el("span", "key", "root"), " ");
    $("tree").append(root);
    const d = root.querySelector("details");
    if (d) d.open = true;
    renderHdus(doc.hdus);
    $("search").disabled = false;
    if ($("search").value) search($("search").value);
  } catch (e) {
    current = null;
    $("meta").textContent = "";
    status(e.message);
  }
}

async function start() {
  let list;
  try {
    list = await getJSON("/api/files");
  } catch (e) {
    status(e.message);
    return;
  }
  document.title = `${list.title} — asdftool view`;
  $("title").textContent = list.title;
  const nav = $("files");
  if (list.single) {
    nav.hidden = true;
    openFile(list.files[0].path);
  } else {
    nav.append(el("h2", null, `${list.files.length} files${list.truncated ? " (list cut)" : ""}`));
    for (const f of list.files) {
      const a = el("a", null, f.path);
      a.href = `#${encodeURIComponent(f.path)}`;
      a.dataset.file = f.path;
      a.append(" ", el("span", "size", `${f.format}, ${sizeText(f.size)}`));
      nav.append(a);
    }
    const pick = () => {
      const file = decodeURIComponent(location.hash.slice(1));
      if (file) openFile(file);
    };
    window.addEventListener("hashchange", pick);
    pick();
  }
  let timer = null;
  $("search").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => search($("search").value.trim()), 150);
  });
}

start();

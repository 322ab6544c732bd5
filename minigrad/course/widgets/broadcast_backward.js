// Broadcast and backward: the browser half of the widget (an anywidget ES module, no build step).
//
// Python (picture.py) does all the arithmetic with minigrad and sends the picture as plain data
// in the model's "data": grids of number strings, and for every cell the sentence to show and
// the cells to light up when it is pointed at. This module only draws that data as SVG, links
// the cells on hover and keyboard focus, and walks the steps. Nothing here computes a gradient.
//
// The model's traits: shape_a, shape_b, op, upstream, typed (set here, read by Python);
// view (forward/backward, changed here without a round trip); data, presets and revision
// (set by Python; revision grows by one on every recomputation). data.ops maps an operator to
// its picture; when Python has sent the picture of an operator already, switching to it is
// drawn at once, with no round trip to the kernel.

const SVG = "http://www.w3.org/2000/svg";
const CELL = 54;      // a cell is CELL x CELL pixels: room for "−12/25" at 15 px
const LABEL = 22;     // room for the row and column index labels
const GAP = 14;       // between the 2-D slices of a 3-D or 4-D array
const PLAY_MS = 700;  // one step every PLAY_MS while playing

// Make an HTML element: el("button", {class: "x", text: "Go"}, child, ...).
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

// Make an SVG element with attributes.
function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  return node;
}

// A shape padded to four axes: (rows of slices, slices per row, rows, columns).
function dims(shape) {
  const padded = [1, 1, 1, 1].slice(0, 4 - shape.length).concat(shape);
  return padded;
}

// Draw one grid as an SVG: index labels on the top and left of every 2-D slice, a label such as
// [0, :, :] above each slice of a 3-D or 4-D array. Returns the figure and its cells' <g>s.
function drawGrid(grid) {
  const [P, Q, R, C] = dims(grid.shape);
  const sliceLabel = grid.shape.length >= 3 ? 18 : 0;
  const sliceW = LABEL + C * CELL, sliceH = sliceLabel + LABEL + R * CELL;
  const width = Q * sliceW + (Q - 1) * GAP + 2, height = P * sliceH + (P - 1) * GAP + 2;
  const picture = svg("svg", {width, height, viewBox: `0 0 ${width} ${height}`,
                              class: "mg-svg", "aria-label": `${grid.title} ${grid.subtitle}`});
  const cells = [];
  grid.cells.forEach((cell, k) => {
    // k is the cell's row-major number; split it into (p, q, r, c)
    const c = k % C, r = Math.floor(k / C) % R, q = Math.floor(k / (C * R)) % Q;
    const p = Math.floor(k / (C * R * Q));
    const x0 = q * (sliceW + GAP), y0 = p * (sliceH + GAP);
    if (r === 0 && c === 0) {  // the labels of this slice, drawn once
      if (sliceLabel) {
        const lead = grid.shape.length === 4 ? `${p}, ${q}` : `${q}`;
        picture.append(text(x0 + LABEL, y0 + 13, `[${lead}, :, :]`, "mg-index", "start"));
      }
      for (let cc = 0; cc < C; cc++) {
        picture.append(text(x0 + LABEL + cc * CELL + CELL / 2, y0 + sliceLabel + 15, `${cc}`,
                            "mg-index"));
      }
      for (let rr = 0; rr < R; rr++) {
        picture.append(text(x0 + LABEL / 2, y0 + sliceLabel + LABEL + rr * CELL + CELL / 2 + 4,
                            `${rr}`, "mg-index"));
      }
    }
    const x = x0 + LABEL + c * CELL, y = y0 + sliceLabel + LABEL + r * CELL;
    const g = svg("g", {class: `mg-cell mg-tone-${grid.tone}` + (cell.copy ? " mg-copy" : ""),
                        tabindex: k === 0 ? "0" : "-1", role: "button",
                        "data-grid": grid.id, "data-k": `${k}`,
                        "aria-label": `${cell.name} = ${cell.v}. ${cell.info}`});
    g.append(svg("rect", {x: x + 2, y: y + 2, width: CELL - 4, height: CELL - 4, rx: 3}));
    const value = text(x + CELL / 2, y + CELL / 2 + 5, cell.v, "mg-value");
    if (cell.v.length >= 6) value.classList.add("mg-long");  // such as −12/25: 13 px
    if (cell.v.length > 6) {  // a long decimal: squeeze it into the cell
      value.setAttribute("textLength", `${CELL - 8}`);
      value.setAttribute("lengthAdjust", "spacingAndGlyphs");
    }
    g.append(value);
    picture.append(g);
    cells.push(g);
  });
  return {picture, cells};
}

function text(x, y, content, cls, anchor = "middle") {
  const node = svg("text", {x, y, class: cls, "text-anchor": anchor});
  node.textContent = content;
  return node;
}

function render({model, el: root}) {
  root.classList.add("mg-bb");

  // --- controls --------------------------------------------------------------------------------
  const shapeA = el("input", {class: "mg-shape-a", type: "text", "aria-label": "shape of A",
                              size: "12"});
  const shapeB = el("input", {class: "mg-shape-b", type: "text", "aria-label": "shape of B",
                              size: "12"});
  const ops = [["+", "+", "add"], ["-", "−", "subtract"], ["*", "×", "multiply"],
               ["/", "÷", "divide"], ["@", "@", "matrix product"]];
  const opButtons = ops.map(([op, label, name]) =>
    el("button", {class: "mg-op", "data-op": op, "aria-label": name, title: name,
                  text: label}));
  const presets = el("select", {class: "mg-presets", "aria-label": "presets"});
  const viewButton = el("button", {class: "mg-backward"});
  const reason = el("span", {class: "mg-reason", role: "status"});
  const upstream = el("select", {class: "mg-upstream", "aria-label": "gradient sent back"});
  for (const [value, label] of [["ones", "ones"], ["random", "small random integers"],
                                ["typed", "typed in"]]) {
    upstream.append(el("option", {value, text: label}));
  }
  const typed = el("input", {class: "mg-typed", type: "text", size: "24",
                             "aria-label": "gradient, typed in, row by row",
                             placeholder: "e.g. 1, 2, 0, -1"});
  const back = el("button", {class: "mg-step-back", text: "◀ back", title: "one step back"});
  const next = el("button", {class: "mg-step", text: "step ▶", title: "one step forward"});
  const play = el("button", {class: "mg-play", text: "play"});
  const reset = el("button", {class: "mg-reset", text: "reset"});
  const busy = el("span", {class: "mg-busy", role: "status", text: ""});
  const message = el("div", {class: "mg-message", "aria-live": "polite"});
  const info = el("div", {class: "mg-info", "aria-live": "polite"});
  const picture = el("div", {class: "mg-picture"});
  const alt = el("p", {class: "mg-alt"});
  const details = el("details", {class: "mg-alt-box"}, el("summary", {text: "Text description"}),
                     alt);

  root.append(
    el("div", {class: "mg-row"}, el("label", {text: "A shape "}, shapeA), ...opButtons,
       el("label", {text: "B shape "}, shapeB), presets),
    el("div", {class: "mg-row"}, viewButton, el("label", {text: "gradient sent back: "}, upstream),
       typed, reason),
    el("div", {class: "mg-row"}, back, next, play, reset, busy),
    message, info, picture, details);

  // --- state -----------------------------------------------------------------------------------
  let cellsById = new Map();  // "grid id/cell number" -> the cell's <g>
  let step = null;            // the step frame shown, or null when none is
  let timer = null;           // the play timer
  let started = null;         // performance.now() when the student changed something
  const times = [];           // redraw times, ms, from the student's change to the painted
                              // picture (kernel round trip included): kept in the page
  const drawTimes = [];       // the time draw() itself took, ms

  const data = () => model.get("data") || {};
  const picked = () => (data().ops || {})[model.get("op")];  // this operator's picture
  const current = () => ((picked() || {}).views || {})[model.get("view")];
  // what is drawn now: a new revision, operator or view means drawing again
  const key = () => [model.get("revision"), model.get("op"), model.get("view"), failed()].join("/");
  let drawnKey = "";
  const failed = () => Boolean(data().error);

  // --- sending changes to Python ------------------------------------------------------------
  function send(changes) {
    started = performance.now();
    busy.textContent = "computing…";
    root.classList.add("mg-busy-now");
    for (const [key, value] of Object.entries(changes)) model.set(key, value);
    model.save_changes();
  }
  const onShape = () => {
    if (shapeA.value === model.get("shape_a") && shapeB.value === model.get("shape_b")) return;
    send({shape_a: shapeA.value, shape_b: shapeB.value});
  };
  shapeA.addEventListener("change", onShape);
  shapeB.addEventListener("change", onShape);
  for (const box of [shapeA, shapeB, typed]) {  // keys typed here are not notebook shortcuts
    box.addEventListener("keydown", (event) => {
      event.stopPropagation();
      if (event.key === "Enter") box.dispatchEvent(new Event("change"));
    });
  }
  opButtons.forEach((b) => b.addEventListener("click", () => {
    const op = b.dataset.op;
    if (!failed() && (data().ops || {})[op]) {  // sent already: draw it now
      started = performance.now();
      model.set("op", op);
      model.save_changes();
    } else {
      send({op});
    }
  }));
  presets.addEventListener("change", () => {
    if (!presets.value) return;
    const [a, b, op] = JSON.parse(presets.value);
    shapeA.value = a; shapeB.value = b;
    send({shape_a: a, shape_b: b, op});
  });
  upstream.addEventListener("change", () => {
    if (upstream.value === "typed" && !typed.value) {  // start from the gradient shown now
      const g = (((picked() || {}).views || {}).backward || {}).rows || [];
      const grid = g.flat().find((item) => item.id === "g" || item.id === "dC");
      if (grid && !grid.cut) typed.value = grid.cells.map((c) => c.v.replace("−", "-")).join(", ");
    }
    send({upstream: upstream.value, typed: typed.value});
  });
  typed.addEventListener("change", () => {
    if (typed.value !== model.get("typed")) send({upstream: "typed", typed: typed.value});
  });
  viewButton.addEventListener("click", () => {
    started = performance.now();
    model.set("view", model.get("view") === "forward" ? "backward" : "forward");
    model.save_changes();
  });

  // --- steps -----------------------------------------------------------------------------------
  function stopPlaying() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    play.textContent = "play";
  }
  function goTo(s) {
    const frames = (current() || {}).steps || [];
    step = s === null ? null : Math.max(0, Math.min(frames.length - 1, s));
    showStep();
  }
  back.addEventListener("click", () => { stopPlaying(); goTo(step === null ? 0 : step - 1); });
  next.addEventListener("click", () => { stopPlaying(); goTo(step === null ? 0 : step + 1); });
  reset.addEventListener("click", () => { stopPlaying(); goTo(null); });
  play.addEventListener("click", () => {
    if (timer !== null) { stopPlaying(); return; }
    const frames = current().steps;
    if (step === null || step >= frames.length - 1) goTo(0);
    play.textContent = "pause";
    timer = setInterval(() => {
      if (step >= current().steps.length - 1) stopPlaying();
      else goTo(step + 1);
    }, PLAY_MS);
  });

  // --- linking -----------------------------------------------------------------------------
  function clearLit() {
    for (const node of picture.querySelectorAll(".mg-lit, .mg-hot")) {
      node.classList.remove("mg-lit", "mg-hot");
    }
  }
  function light(pairs) {
    for (const [gid, k] of pairs) {
      const node = cellsById.get(`${gid}/${k}`);
      if (node) node.classList.add("mg-lit");
    }
  }
  function point(node, cell) {  // the student points at a cell (mouse or keyboard)
    if (failed()) return;
    clearLit();
    node.classList.add("mg-hot");
    light(cell.lit);
    info.textContent = cell.info;
  }
  function unpoint() {
    clearLit();
    info.textContent = "";
    if (step !== null) showStep();
  }

  // Show the step frame: partial sums written into the cells, the cells of this step lit.
  function showStep() {
    const view = current();
    for (const [key, node] of cellsById) {  // back to the values Python drew
      node.querySelector(".mg-value").textContent = node.dataset.v;
    }
    clearLit();
    const frames = view ? view.steps : [];
    const total = frames.length;
    back.disabled = next.disabled = play.disabled = reset.disabled = failed() || !total;
    if (step === null || !view) {
      info.textContent = "";
      root.dataset.step = "";
      return;
    }
    const frame = frames[step];
    for (const [gid, values] of Object.entries(frame.set)) {
      for (const [k, v] of Object.entries(values)) {
        const node = cellsById.get(`${gid}/${k}`);
        if (node) node.querySelector(".mg-value").textContent = v;
      }
    }
    light(frame.lit);
    info.textContent = frame.text;
    root.dataset.step = `${step}`;
  }

  // Arrow keys move between the cells of one grid; Tab moves between grids.
  function onKey(event, cells, grid) {
    const k = Number(event.currentTarget.dataset.k);
    const cols = grid.shape.length ? grid.shape[grid.shape.length - 1] : 1;
    const move = {ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols}[event.key];
    if (move === undefined) return;
    const target = cells[k + move];
    if (!target) return;
    event.preventDefault();
    cells.forEach((c) => c.setAttribute("tabindex", "-1"));
    target.setAttribute("tabindex", "0");
    target.focus();
  }

  // --- drawing -----------------------------------------------------------------------------
  function draw() {
    drawnKey = key();
    stopPlaying();
    step = null;
    const d = data();
    const view = current();
    const forward = model.get("view") === "forward";
    // A box the student is typing in keeps what is typed: a redraw that arrives meanwhile
    // (from an earlier change) must not overwrite it.
    const typing = (box) => box.getRootNode().activeElement === box;
    if (!typing(shapeA)) shapeA.value = model.get("shape_a");
    if (!typing(shapeB)) shapeB.value = model.get("shape_b");
    upstream.value = model.get("upstream");
    if (!typing(typed)) typed.value = model.get("typed");
    typed.hidden = model.get("upstream") !== "typed";
    opButtons.forEach((b) => b.setAttribute("aria-pressed", `${b.dataset.op === model.get("op")}`));
    presets.replaceChildren(el("option", {value: "", text: "Try a preset…"}),
      ...(model.get("presets") || []).map(([label, a, b, op]) =>
        el("option", {value: JSON.stringify([a, b, op]), text: label})));

    const ones = model.get("upstream") === "ones";
    viewButton.textContent = forward ? (ones ? "Send back ones" : "Send back the gradient")
                                     : "Show forward pass";
    viewButton.disabled = failed() || !view;
    reason.textContent = failed() ? (view ? "Disabled until the input above is fixed: the "
                                            + "greyed picture is the last one that worked."
                                          : "Disabled until the input above is fixed.")
                                  : "";
    root.classList.toggle("mg-error", failed());
    picture.classList.toggle("mg-stale", failed());
    picture.setAttribute("aria-disabled", `${failed()}`);

    message.replaceChildren();
    if (failed()) {
      message.append(el("p", {class: "mg-problem"}, el("b", {text: "No new picture: "}),
                         d.error));
      if (d.error_detail) message.append(el("pre", {text: d.error_detail}));
    }
    if (view) {
      for (const note of view.notes) message.append(el("p", {text: note}));
    }

    picture.replaceChildren();
    cellsById = new Map();
    info.textContent = "";
    alt.textContent = view ? view.alt : "";
    picture.setAttribute("aria-label", view ? view.alt : "no picture yet");
    if (!view) { showStep(); return; }
    for (const row of view.rows) {
      const line = el("div", {class: "mg-line"});
      for (const item of row) {
        if (item.kind === "sym") {
          line.append(el("span", {class: "mg-sym", text: item.text}));
          continue;
        }
        const {picture: drawing, cells} = drawGrid(item);
        cells.forEach((node, k) => {
          const cell = item.cells[k];
          node.dataset.v = cell.v;
          cellsById.set(`${item.id}/${k}`, node);
          node.addEventListener("mouseenter", () => point(node, cell));
          node.addEventListener("focus", () => point(node, cell));
          node.addEventListener("mouseleave", unpoint);
          node.addEventListener("blur", unpoint);
          node.addEventListener("keydown", (event) => onKey(event, cells, item));
        });
        line.append(el("figure", {class: "mg-grid", "data-grid": item.id},
                       el("figcaption", {},
                          el("div", {class: "mg-title", text: item.title}),
                          el("div", {class: "mg-subtitle", text: item.subtitle}),
                          el("div", {class: "mg-cut", text: item.cut})),
                       drawing));
      }
      picture.append(line);
    }
    showStep();
  }

  // A redraw is finished when the browser has painted it: time it then.
  function drawn() {
    const t = performance.now();
    draw();
    drawTimes.push(performance.now() - t);
    root.dataset.drawMs = JSON.stringify(drawTimes.map((d) => Math.round(d * 10) / 10));
    busy.textContent = "";
    root.classList.remove("mg-busy-now");
    if (started !== null) {
      const t0 = started;
      started = null;
      requestAnimationFrame(() => {
        times.push(performance.now() - t0);
        root.dataset.redrawMs = JSON.stringify(times.map((t) => Math.round(t * 10) / 10));
      });
    }
    // Once this picture is on screen, ask the kernel for the other operators' pictures, so
    // that switching between +, −, ×, ÷ needs no kernel (Python decides whether it computes
    // them: not for big shapes, the matrix product or a bad input).
    const ops = Object.keys((model.get("data") || {}).ops || {});
    if (ops.length < 4 && model.get("op") !== "@" && !failed()) {
      const revision = model.get("revision");
      requestAnimationFrame(() => model.send({type: "prefetch", revision}));
    }
  }
  model.on("change:revision", drawn);
  model.on("change:view", drawn);
  model.on("change:op", () => { if (picked()) drawn(); });  // else wait for the new data
  model.on("change:data", () => { if (picked() && key() !== drawnKey) drawn(); });
  draw();
  return () => stopPlaying();  // anywidget calls this when the view is removed
}

export default {render};

// Broadcast and backward, static mode: the picture computed in the browser, with no kernel.
//
// In Jupyter, Python (picture.py) runs minigrad forward and backward and sends the picture as
// data; broadcast_backward.js draws it. On the website there is no Python, so this file makes
// the very same data itself: it reads the shapes (as shapes.py), broadcasts them (as plan.py),
// draws NumPy's seeded random operands (PCG64 and SeedSequence, as numpy.random.default_rng),
// computes the result, what each result cell sends back and the summed-back gradients with
// the backward rules of minigrad's tensor.py, and writes every sentence from the same
// templates (messages.json, embedded by the site as window.MINIGRAD_BB_TEXT). A model object
// with anywidget's interface (get, set, save_changes, on, send) then lets the unchanged
// broadcast_backward.js draw it. tests/test_site_widget.py compares both modes with node.
//
// Loaded as a classic script (a page opened from disk cannot load ES modules) or by node
// (module.exports).
(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.MinigradStatic = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  // --- the shared sentences and limits --------------------------------------------------------
  let TEXT = null, DIGITS = null, LIMITS = null, PRESETS = null;

  function configure(options = {}) {
    const g = typeof window !== "undefined" ? window : {};
    TEXT = options.text || g.MINIGRAD_BB_TEXT;
    DIGITS = options.digitNames || g.MINIGRAD_BB_DIGITS || {};
    LIMITS = options.limits || g.MINIGRAD_BB_LIMITS;
    PRESETS = options.presets || g.MINIGRAD_BB_PRESETS || [];
    if (!TEXT || !LIMITS) throw new Error("static_mode.js: the widget's text and limits are missing");
  }
  function ready() { if (!TEXT) configure(); }

  // A Python tuple as str() writes it: (), (4,), (3, 1).
  function tuple(shape) {
    if (shape.length === 0) return "()";
    if (shape.length === 1) return `(${shape[0]},)`;
    return `(${shape.join(", ")})`;
  }

  function say(key, fields = {}) {
    ready();
    const template = TEXT[key];
    if (template === undefined) throw new Error(`say: no template ${key}`);
    return template.replace(/\{(\w+)\}/g, (_, name) => {
      if (!(name in fields)) throw new Error(`say(${key}): the field ${name} is missing`);
      const v = fields[name];
      return Array.isArray(v) ? tuple(v) : String(v);
    });
  }

  class ShapeError extends Error {}

  // --- reading shapes (shapes.py) ----------------------------------------------------------
  const PAIRS = {"(": ")", "[": "]"};
  const isDigit = (ch) => (ch >= "0" && ch <= "9") || Object.prototype.hasOwnProperty.call(DIGITS, ch);

  function checkCharacters(text, raw, name) {
    for (const ch of raw) {
      if (isDigit(ch) && !(ch >= "0" && ch <= "9")) {
        throw new ShapeError(say("shape_bad_digit", {name, text, ch, what: DIGITS[ch]}));
      }
    }
    const chars = [...raw];
    const opens = chars.filter((c) => c === "(" || c === "[");
    const closes = chars.filter((c) => c === ")" || c === "]");
    if (!opens.length && !closes.length) return;
    const first = chars[0], last = chars[chars.length - 1];
    if (opens.length === 1 && !closes.length && first in PAIRS) {
      throw new ShapeError(say("bracket_unclosed", {name, text, first, raw, close: PAIRS[first],
                                                     rest: chars.slice(1).join("")}));
    }
    if (closes.length === 1 && !opens.length && (last === ")" || last === "]")) {
      const opener = last === ")" ? "(" : "[";
      throw new ShapeError(say("bracket_unopened", {name, text, last, opener, raw,
                                                     rest: chars.slice(0, -1).join("")}));
    }
    if (!(opens.length === 1 && closes.length === 1 && PAIRS[first] === last)) {
      throw new ShapeError(say("bracket_unpaired", {name, text}));
    }
  }

  function parseShape(text, name = "A") {
    ready();
    const raw = text.trim();
    if (!raw) throw new ShapeError(say("shape_empty", {name}));
    checkCharacters(text, raw, name);
    let inner = raw;
    const bracketed = inner.length >= 2 && PAIRS[inner[0]] === inner[inner.length - 1];
    if (bracketed) inner = inner.slice(1, -1).trim();
    if (!inner && bracketed) return [];
    if (inner.endsWith(",")) inner = inner.slice(0, -1).trim();
    if (!inner) throw new ShapeError(say("shape_no_sizes", {name, text}));
    const pieces = inner.split(/\s*,\s*|\s+/);
    const sizes = [];
    pieces.forEach((piece, axis) => {
      if (!piece) throw new ShapeError(say("shape_empty_size", {name, text}));
      if (!/^[+-]?[0-9]+$/.test(piece)) {
        throw new ShapeError(say("shape_not_whole", {name, text, piece}));
      }
      const n = Number(piece) + 0;  // + 0: "-0" is 0
      if (n < 0) throw new ShapeError(say("shape_negative", {name, text, n, axis}));
      if (n === 0) throw new ShapeError(say("shape_zero", {name, text, axis}));
      sizes.push(n);
    });
    if (sizes.length > LIMITS.MAX_DIMS) {
      throw new ShapeError(say("shape_too_many_axes", {name, text, count: sizes.length,
                                                        most: LIMITS.MAX_DIMS}));
    }
    return sizes;
  }

  function capShapes(shapeA, shapeB, result) {
    const shown = result.map((n) => Math.min(n, LIMITS.MAX_SIDE));
    const prod = (s) => s.reduce((x, y) => x * y, 1);
    while (prod(shown) > LIMITS.MAX_CELLS) {
      let longest = 0;
      shown.forEach((n, ax) => { if (n > shown[longest]) longest = ax; });
      shown[longest] -= 1;
    }
    const cut = (shape) => {
      const lead = result.length - shape.length;
      return shape.map((n, i) => (n === 1 ? 1 : shown[lead + i]));
    };
    return [cut(shapeA), cut(shapeB), shown];
  }

  // --- broadcasting (plan.py) --------------------------------------------------------------
  const SYMBOLS = {"+": "+", "-": "−", "*": "×", "/": "÷", "@": "@"};
  const prod = (s) => s.reduce((x, y) => x * y, 1);

  function broadcastPair(shapeA, shapeB, op) {
    const ndim = Math.max(shapeA.length, shapeB.length);
    const pa = Array(ndim - shapeA.length).fill(1).concat(shapeA);
    const pb = Array(ndim - shapeB.length).fill(1).concat(shapeB);
    const result = [], clashes = [];
    for (let axis = 0; axis < ndim; axis++) {
      const m = pa[axis], n = pb[axis];
      if (m === n || n === 1) result.push(m);
      else if (m === 1) result.push(n);
      else {
        clashes.push(say("clash_axis", {axis: axis - ndim, own_a: axis - (ndim - shapeA.length),
                                        own_b: axis - (ndim - shapeB.length), m, n}));
      }
    }
    if (clashes.length) {
      throw new ShapeError(say("clash", {symbol: op, shape_a: shapeA, shape_b: shapeB,
                                         clashes: clashes.join("; "), rule: say("numpy_rule")}));
    }
    return result;
  }

  // Every index of a shape, in row-major order (as numpy.ndindex).
  function cells(shape) {
    const out = [];
    const total = prod(shape);
    for (let k = 0; k < total; k++) {
      const index = Array(shape.length);
      let rest = k;
      for (let ax = shape.length - 1; ax >= 0; ax--) {
        index[ax] = rest % shape[ax];
        rest = Math.floor(rest / shape[ax]);
      }
      out.push(index);
    }
    return out;
  }
  function flat(index, shape) {
    let f = 0;
    for (let ax = 0; ax < shape.length; ax++) f = f * shape[ax] + index[ax];
    return f;
  }

  // How one input broadcasts to the result: its added and stretched axes, and where a result
  // index reads from.
  function trace(own, shape) {
    const lead = shape.length - own.length;
    const added = [...Array(lead).keys()];
    const stretched = [];
    own.forEach((n, i) => { if (n === 1 && shape[lead + i] !== 1) stretched.push(lead + i); });
    const source = (r) => own.map((n, i) => (n === 1 ? 0 : r[lead + i]));
    const summed = added.concat(stretched).sort((x, y) => x - y);
    const copied = summed.filter((ax) => shape[ax] > 1);
    return {own, lead, added, stretched, source, summed, copied};
  }

  function describe(t, name, shape) {
    const own = t.own;
    if (own.length === shape.length && own.every((n, i) => n === shape[i])) {
      return say("describe_same", {name, shape: own});
    }
    if (!t.copied.length) return say("describe_gains", {name, shape: own, result: shape});
    const parts = [];
    if (t.added.length) {
      parts.push(say("describe_new_axes", {
        word: say(t.added.length === 1 ? "word_axis" : "word_axes"),
        axes: t.added.join(", "), sizes: t.added.map((ax) => shape[ax]).join(" × ")}));
    }
    if (t.stretched.length) {
      parts.push(say("describe_stretched", {
        moves: t.stretched.map((ax) => say("describe_move", {axis: ax, size: shape[ax]})).join(", ")}));
    }
    const copies = t.copied.reduce((c, ax) => c * shape[ax], 1);
    return say("describe_used", {name, shape: own, parts: parts.join(say("word_and")), copies});
  }

  // --- NumPy's default_rng: SeedSequence and PCG64 -----------------------------------------
  const M32 = 0xFFFFFFFF;
  const mul32 = (a, b) => Math.imul(a, b) >>> 0;

  function seedSequenceState(entropy, nWords32) {
    const INIT_A = 0x43b0d7e5, MULT_A = 0x931e8875, INIT_B = 0x8b51f9dd, MULT_B = 0x58f38ded;
    const MIX_L = 0xca01f9dd, MIX_R = 0x4973f715;
    let hashConst = INIT_A;
    const hashmix = (value) => {
      value = (value ^ hashConst) >>> 0;
      hashConst = mul32(hashConst, MULT_A);
      value = mul32(value, hashConst);
      return (value ^ (value >>> 16)) >>> 0;
    };
    const mix = (x, y) => {
      let r = (mul32(MIX_L, x) - mul32(MIX_R, y)) >>> 0;
      return (r ^ (r >>> 16)) >>> 0;
    };
    const pool = [0, 0, 0, 0];
    for (let i = 0; i < 4; i++) pool[i] = hashmix(i < entropy.length ? entropy[i] : 0);
    for (let s = 0; s < 4; s++) {
      for (let d = 0; d < 4; d++) if (s !== d) pool[d] = mix(pool[d], hashmix(pool[s]));
    }
    for (let s = 4; s < entropy.length; s++) {
      for (let d = 0; d < 4; d++) pool[d] = mix(pool[d], hashmix(entropy[s]));
    }
    let h = INIT_B;
    const out = [];
    for (let i = 0; i < nWords32; i++) {
      let v = (pool[i % 4] ^ h) >>> 0;
      h = mul32(h, MULT_B);
      v = mul32(v, h);
      out.push((v ^ (v >>> 16)) >>> 0);
    }
    return out;
  }

  // The words of a non-negative integer, low first (numpy's _int_to_uint32_array).
  function intWords(n) {
    if (n === 0) return [0];
    const words = [];
    let big = BigInt(n);
    while (big > 0n) { words.push(Number(big & 0xFFFFFFFFn)); big >>= 32n; }
    return words;
  }

  // 128-bit numbers as 8 limbs of 16 bits, lowest first: exact in doubles, no BigInt per draw.
  const limbs = (words32) => words32.flatMap((w) => [w & 0xFFFF, w >>> 16]);
  function mulAdd128(x, m, c) {  // (x * m + c) mod 2**128
    const out = [0, 0, 0, 0, 0, 0, 0, 0];
    for (let i = 0; i < 8; i++) {
      if (x[i] === 0) continue;
      for (let j = 0; j < 8 - i; j++) out[i + j] += x[i] * m[j];
    }
    let carry = 0;
    for (let k = 0; k < 8; k++) {
      const v = out[k] + c[k] + carry;
      out[k] = v % 65536;
      carry = Math.floor(v / 65536);
    }
    return out;
  }
  const ZERO = [0, 0, 0, 0, 0, 0, 0, 0], ONE = [1, 0, 0, 0, 0, 0, 0, 0];
  // PCG_DEFAULT_MULTIPLIER_128 = 2549297995355413924 * 2**64 + 4865540595714422341
  const PCG_MULT = limbs([0x9FCCF645, 0x4385DF64, 0x1FC65DA4, 0x2360ED05]);

  // numpy.random.default_rng([seed, stream]): PCG64 seeded by SeedSequence, the same numbers.
  class Generator {
    constructor(seed, stream) {
      const w = seedSequenceState(intWords(seed).concat(intWords(stream)), 8);
      // generate_state(4, uint64) viewed as 4 little-endian words; seed = val[0] << 64 | val[1]
      const initState = limbs([w[2], w[3], w[0], w[1]]);
      const initSeq = limbs([w[6], w[7], w[4], w[5]]);
      this.inc = mulAdd128(initSeq, [2, 0, 0, 0, 0, 0, 0, 0], ONE);  // (initseq << 1) | 1
      this.state = mulAdd128(ZERO, ONE, this.inc);                   // step from 0
      this.state = mulAdd128(this.state, ONE, initState);            // + initstate
      this.state = Float64Array.from(mulAdd128(this.state, PCG_MULT, this.inc));  // step
      this.inc = Float64Array.from(this.inc);
      this.scratch = new Float64Array(8);
      this.buffered = null;
    }
    step() {  // state = state * PCG_MULT + inc (mod 2**128), in place
      const x = this.state, o = this.scratch, c = this.inc, m = PCG_MULT;
      o.fill(0);
      for (let i = 0; i < 8; i++) {
        const xi = x[i];
        if (xi === 0) continue;
        for (let j = 0; j < 8 - i; j++) o[i + j] += xi * m[j];
      }
      let carry = 0;
      for (let k = 0; k < 8; k++) {
        const v = o[k] + c[k] + carry;
        carry = Math.floor(v / 65536);
        x[k] = v - carry * 65536;
      }
      return x;
    }
    next32() {
      if (this.buffered !== null) { const v = this.buffered; this.buffered = null; return v; }
      const s = this.step();
      // XSL-RR: the high and low halves xor-ed, rotated right by the top 6 bits
      let lo = ((s[0] | (s[1] << 16)) ^ (s[4] | (s[5] << 16))) >>> 0;
      let hi = ((s[2] | (s[3] << 16)) ^ (s[6] | (s[7] << 16))) >>> 0;
      let rot = s[7] >>> 10;
      if (rot >= 32) { [lo, hi] = [hi, lo]; rot -= 32; }
      if (rot > 0) {
        [lo, hi] = [((lo >>> rot) | (hi << (32 - rot))) >>> 0, ((hi >>> rot) | (lo << (32 - rot))) >>> 0];
      }
      this.buffered = hi;
      return lo;
    }
    // integers(low, high, size=count) for a range that fits in 32 bits (Lemire's method).
    integers(low, high, count) {
      const rng = high - 1 - low, excl = rng + 1;
      const out = new Float64Array(count);
      for (let i = 0; i < count; i++) {
        let m = this.next32() * excl;
        let leftover = m % 4294967296;
        if (leftover < excl) {
          const threshold = (M32 - rng) % excl;
          while (leftover < threshold) { m = this.next32() * excl; leftover = m % 4294967296; }
        }
        out[i] = low + Math.floor(m / 4294967296);
      }
      return out;
    }
  }

  // --- numbers as the picture writes them (picture.format_number) --------------------------
  const bigAbs = (x) => (x < 0n ? -x : x);
  const floorDiv = (a, b) => { const q = a / b; return (a % b !== 0n && ((a < 0n) !== (b < 0n))) ? q - 1n : q; };
  function exactFraction(x) {  // the float x as num/den, den a power of two, in lowest terms
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, x);
    const hi = view.getUint32(0), lo = view.getUint32(4);
    const sign = hi >>> 31 ? -1n : 1n;
    const exp = (hi >>> 20) & 0x7ff;
    let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
    let e;
    if (exp === 0) e = -1074; else { mant |= 1n << 52n; e = exp - 1075; }
    if (mant === 0n) return [0n, 1n];
    while (e < 0 && (mant & 1n) === 0n) { mant >>= 1n; e += 1; }
    if (e >= 0) return [sign * (mant << BigInt(e)), 1n];
    return [sign * mant, 1n << BigInt(-e)];
  }
  function limitDenominator(x, most) {  // Fraction(x).limit_denominator(most), as Python 3.11
    const [n0, d0] = exactFraction(x);
    if (d0 <= most) return [n0, d0];
    let p0 = 0n, q0 = 1n, p1 = 1n, q1 = 0n, n = n0, d = d0;
    for (;;) {
      const a = floorDiv(n, d);
      const q2 = q0 + a * q1;
      if (q2 > most) break;
      [p0, q0, p1, q1] = [p1, q1, p0 + a * p1, q2];
      [n, d] = [d, n - a * d];
    }
    const k = floorDiv(most - q0, q1);
    const b1 = [p0 + k * p1, q0 + k * q1], b2 = [p1, q1];
    // |b2 - x| <= |b1 - x|, compared exactly
    const dist = ([p, q]) => [bigAbs(p * d0 - n0 * q), q * d0];
    const [e2, f2] = dist(b2), [e1, f1] = dist(b1);
    return e2 * f1 <= e1 * f2 ? b2 : b1;
  }
  function formatG3(x) {  // Python's f"{x:.3g}"
    if (x === 0) return Object.is(x, -0) ? "-0" : "0";
    const [mant, expText] = x.toExponential(2).split("e");
    const exp = Number(expText);
    const strip = (s) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
    if (exp >= -4 && exp < 3) return strip(x.toFixed(Math.max(0, 2 - exp)));
    return `${strip(mant)}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  const formatCache = new Map();
  function formatNumber(x) {
    x = Number(x);
    if (formatCache.has(x)) return formatCache.get(x);
    let text;
    if (Math.abs(x - Math.round(x)) < 1e-9) {
      text = BigInt(Math.round(x)).toString();
    } else {
      const [p, q] = limitDenominator(x, 1000n);
      text = Math.abs(Number(p) / Number(q) - x) < 1e-9 ? `${p}/${q}` : formatG3(x);
    }
    text = text.replace(/-/g, "−");
    if (formatCache.size > 4096) formatCache.clear();
    formatCache.set(x, text);
    return text;
  }
  const paren = (t) => (t.startsWith("−") || t.includes("/") ? `(${t})` : t);
  const cellName = (grid, index) => (index.length ? `${grid}[${index.join(", ")}]` : grid);

  // --- the typed gradient (picture.parse_gradient) ------------------------------------------
  const FRACTION = /^\s*([-+]?)(?=\d|\.\d)(\d*|\d+(?:_\d+)*)(?:(?:\/(\d+(?:_\d+)*))?|(?:\.(\d*|\d+(?:_\d+)*))?(?:e([-+]?\d+(?:_\d+)*))?)\s*$/i;
  function fractionValue(piece) {  // float(Fraction(piece)), or null where Python raises
    const m = FRACTION.exec(piece);
    if (!m) return null;
    const clean = (s) => (s || "").replace(/_/g, "");
    const sign = m[1] === "-" ? -1n : 1n;
    let num = BigInt(clean(m[2]) || "0"), den = 1n;
    if (m[3] !== undefined) {
      den = BigInt(clean(m[3]));
      if (den === 0n) return null;  // ZeroDivisionError
    } else {
      if (m[4]) { const dec = clean(m[4]); num = num * 10n ** BigInt(dec.length) + BigInt(dec); den = 10n ** BigInt(dec.length); }
      if (m[5]) { const e = Number(clean(m[5])); if (e >= 0) num *= 10n ** BigInt(e); else den *= 10n ** BigInt(-e); }
    }
    return divideExactly(sign * num, den);
  }
  function divideExactly(num, den) {  // num/den correctly rounded to the nearest double
    if (num === 0n) return 0;
    const neg = num < 0n;
    let n = bigAbs(num);
    // scale so that the quotient has 64+ significant bits, then let Number() round once
    const shift = 128 - (n.toString(2).length - den.toString(2).length);
    const scaled = shift >= 0 ? (n << BigInt(shift)) / den : n / (den << BigInt(-shift));
    const exact = shift >= 0 ? (n << BigInt(shift)) % den === 0n : n % (den << BigInt(-shift)) === 0n;
    const q = (scaled << 1n) | (exact ? 0n : 1n);  // a sticky bit keeps the rounding honest
    const value = Number(q) * Math.pow(2, -(shift + 1));
    return neg ? -value : value;
  }

  function parseGradient(text, count, shape) {
    const cleaned = text.replace(/[\[\]()]/g, " ");
    const pieces = cleaned.replace(/,/g, " ").split(/\s+/).filter((p) => p);
    if (!pieces.length) throw new ShapeError(say("gradient_empty", {count}));
    const values = [];
    for (const piece of pieces) {
      const bad = [...piece].filter((ch) => isDigit(ch) && !(ch >= "0" && ch <= "9"));
      if (bad.length) throw new ShapeError(say("gradient_bad_digit", {piece, ch: bad[0]}));
      const v = fractionValue(piece);
      if (v === null) throw new ShapeError(say("gradient_not_number", {piece}));
      values.push(v);
    }
    if (values.length === 1) return new Float64Array(count).fill(values[0]);
    if (values.length !== count) {
      throw new ShapeError(say("gradient_count", {shape, count, typed: values.length}));
    }
    return Float64Array.from(values);
  }

  // --- operands and the upstream gradient (picture._operands, _upstream) ------------------
  function operands(shapeA, shapeB, seed, op) {
    let a = new Generator(seed, 0).integers(1, 6, prod(shapeA));
    let b = new Generator(seed, 1).integers(1, 6, prod(shapeB));
    if (op === "@") { a = a.map((v) => Math.ceil(v / 2)); b = b.map((v) => Math.ceil(v / 2)); }
    return [a, b];
  }
  function upstreamValues(kind, typed, real, shown, atReal, seed) {
    const shape = atReal ? real : shown;
    if (kind === "ones") return new Float64Array(prod(shape)).fill(1);
    if (kind === "random") {
      const g = new Generator(seed, 2).integers(-3, 4, prod(shape));
      return g.map((v) => (v === 0 ? 1 : v));
    }
    if (kind === "typed") {
      const n = prod(real);
      if (tuple(real) !== tuple(shown)) {
        throw new ShapeError(say("gradient_too_big", {drawn: prod(shown), shape: real, count: n}));
      }
      return parseGradient(typed, n, real);
    }
    throw new Error(`upstream must be one of ['ones', 'random', 'typed']; got '${kind}'`);
  }
  const upstreamWords = (kind) => say(`upstream_${kind}`);

  // --- the picture's pieces (picture.py) ----------------------------------------------------
  function cutText(shown, real) {
    const parts = [];
    shown.forEach((s, axis) => {
      const n = real[axis];
      if (s === n) return;
      let what;
      if (axis === real.length - 1) what = say(real.length > 1 ? "cut_columns" : "cut_cells");
      else if (axis === real.length - 2) what = say("cut_rows");
      else what = say("cut_slices", {axis});
      parts.push(say("cut_part", {shown: s, real: n, what}));
    });
    return parts.length ? say("cut", {parts: parts.join(", ")}) : "";
  }
  function grid(gid, title, shape, real, values, tone, subtitle = "", copies = null) {
    return {kind: "grid", id: gid, title, subtitle, tone, shape: [...shape], real: [...real],
            cut: cutText(shape, real),
            cells: cells(shape).map((i) => ({name: cellName(gid, i), v: values(i),
                                             copy: copies ? copies(i) : false, info: "", lit: []}))};
  }
  function link(g, index, info, lit) {
    const cell = g.cells[flat(index, g.shape)];
    cell.info = info;
    cell.lit = lit.map(([other, i]) => [other.id, flat(i, other.shape)]);
  }
  const sym = (text) => ({kind: "sym", text});
  function sumText(terms, total, realCount) {
    let written = terms.map((t) => (t.startsWith("−") ? paren(t) : t)).join(" + ");
    if (realCount > terms.length) written += say("sum_more", {count: realCount, drawn: terms.length});
    return `${written} = ${total}`;
  }
  // An array stored row-major at `shape`, read at an index.
  const at = (arr, shape, index) => arr[flat(index, shape)];
  const axesWord = (axes) => say(axes.length === 1 ? "word_axis" : "word_axes");

  const RULES = {"+": ["add"], "-": ["sub"], "*": ["mul"], "/": ["div"]};
  const rule = (op, o) => say(`rule_${RULES[op][0]}_${o}`);
  const FORWARD = {"+": (x, y) => x + y, "-": (x, y) => x - y, "*": (x, y) => x * y,
                   "/": (x, y) => x / y};
  // minigrad's backward rules (tensor.py), for one cell: what the output gradient g sends
  // back to a (o = "a") or b (o = "b").
  const SENT = {
    "+": {a: (g) => g, b: (g) => g},
    "-": {a: (g) => g, b: (g) => -g},
    "*": {a: (g, x, y) => g * y, b: (g, x, y) => g * x},
    "/": {a: (g, x, y) => g / y, b: (g, x, y) => (-g * x) / (y * y)},
  };
  function ruleWithNumbers(op, operand, g, a, b, sent) {
    if (op === "+" || op === "-") {
      const local = op === "+" || operand === "a" ? "1" : "(−1)";
      return say("numbers_addsub", {local, g: paren(g), sent});
    }
    if (op === "*") {
      return say("numbers_mul", {other_name: operand === "a" ? "b" : "a", g: paren(g),
                                 other: paren(operand === "a" ? b : a), sent});
    }
    if (operand === "a") return say("numbers_div_a", {g: paren(g), b: paren(b), sent});
    return say("numbers_div_b", {g: paren(g), a: paren(a), b: paren(b), sent});
  }

  function broadcastPicture(shapeA, shapeB, op, upstream, typed, seed) {
    const real = broadcastPair(shapeA, shapeB, op);
    const [shownA, shownB, shown] = capShapes(shapeA, shapeB, real);
    const size = prod(real);
    const atReal = size <= LIMITS.MAX_COMPUTE;
    const f = FORWARD[op];
    const computedA = atReal ? shapeA : shownA, computedB = atReal ? shapeB : shownB;
    const computed = atReal ? real : shown;
    const [a, b] = operands(computedA, computedB, seed, op);
    const g = upstreamValues(upstream, typed, real, shown, atReal, seed);
    const tA = trace(computedA, computed), tB = trace(computedB, computed);
    const valueOf = {a: (i) => at(a, computedA, i), b: (i) => at(b, computedB, i)};
    // the drawn cells
    const pA = trace(shownA, shown), pB = trace(shownB, shown);
    const P = {a: pA, b: pB};
    const shownIn = {a: shownA, b: shownB}, realIn = {a: shapeA, b: shapeB};
    const big = {a: trace(shapeA, real), b: trace(shapeB, real)};
    const counts = {a: big.a.summed.reduce((c, ax) => c * real[ax], 1),
                    b: big.b.summed.reduce((c, ax) => c * real[ax], 1)};
    const gAt = (r) => at(g, computed, r);
    const out = (r) => f(valueOf.a(pA.source(r)), valueOf.b(pB.source(r)));
    // A.grad and B.grad: every result cell (at the computed shape) sends its share to the
    // input cells it read; one pass over the result in row-major order, so each input cell's
    // terms are added in that order. Strides of each input along the result's axes: 0 where
    // the input was broadcast.
    const strides = (t) => {
      const out = Array(computed.length).fill(0);
      let stride = 1;
      for (let k = t.own.length - 1; k >= 0; k--) {
        if (t.own[k] !== 1) out[t.lead + k] = stride;
        stride *= t.own[k];
      }
      return out;
    };
    const sA = strides(tA), sB = strides(tB);
    const totals = {a: new Float64Array(prod(computedA)), b: new Float64Array(prod(computedB))};
    const ruleA = SENT[op].a, ruleB = SENT[op].b;
    const index = Array(computed.length).fill(0);
    for (let r = 0, fa = 0, fb = 0, total = prod(computed); r < total; r++) {
      const gv = g[r], x = a[fa], y = b[fb];
      totals.a[fa] += ruleA(gv, x, y);
      totals.b[fb] += ruleB(gv, x, y);
      for (let ax = computed.length - 1; ax >= 0; ax--) {  // the next result index
        index[ax] += 1; fa += sA[ax]; fb += sB[ax];
        if (index[ax] < computed[ax]) break;
        fa -= sA[ax] * computed[ax]; fb -= sB[ax] * computed[ax]; index[ax] = 0;
      }
    }
    const gradAt = {a: (i) => at(totals.a, computedA, i), b: (i) => at(totals.b, computedB, i)};
    const fmt = formatNumber;
    const symbol = SYMBOLS[op];
    const isCopy = (o, r) => P[o].summed.some((ax) => r[ax] !== 0);
    const readers = (o) => {
      const map = new Map();
      for (const i of cells(shownIn[o])) map.set(flat(i, shownIn[o]), {index: i, rs: []});
      for (const r of cells(shown)) map.get(flat(P[o].source(r), shownIn[o])).rs.push(r);
      return [...map.values()];
    };

    // --- forward view ---------------------------------------------------------------------
    const own = {}, stretched = {};
    for (const o of "ab") {
      const name = o.toUpperCase();
      own[o] = grid(name, say("title_input", {name, shape: realIn[o]}), shownIn[o], realIn[o],
                    (i) => fmt(valueOf[o](i)), o, say("subtitle_stored"));
      const copied = big[o].copied;
      stretched[o] = grid(`${name}→`, say("title_stretched", {name, real}), shown, real,
                          (r) => fmt(valueOf[o](P[o].source(r))), o,
                          copied.length ? say("copied_along", {word: axesWord(copied), axes: copied.join(", ")})
                                        : say("not_copied"),
                          (r) => isCopy(o, r));
    }
    const result = grid("C", say("title_result", {sym: symbol, real}), shown, real,
                        (r) => fmt(out(r)), "out", say("subtitle_result"));
    for (const r of cells(shown)) {
      const ia = pA.source(r), ib = pB.source(r);
      const info = say("info_result", {cell: cellName("C", r), a: cellName("A", ia), sym: symbol,
                                       b: cellName("B", ib), va: fmt(valueOf.a(ia)),
                                       vb: paren(fmt(valueOf.b(ib))), vc: fmt(out(r))});
      link(result, r, info, [[own.a, ia], [own.b, ib], [stretched.a, r], [stretched.b, r]]);
      for (const [o, i] of [["a", ia], ["b", ib]]) {
        const kind = say(isCopy(o, r) ? "copy_kind_copy" : "copy_kind_original");
        const name = o.toUpperCase();
        link(stretched[o], r, say("info_stretched", {cell: cellName(`${name}→`, r), kind,
                                                     source: cellName(name, i), v: fmt(valueOf[o](i))}),
             [[own[o], i], [result, r]]);
      }
    }
    for (const o of "ab") {
      for (const {index: i, rs} of readers(o)) {
        const n = counts[o];
        const more = n > rs.length ? say("drawn_count", {drawn: rs.length}) : "";
        link(own[o], i, say("info_read_by", {cell: cellName(o.toUpperCase(), i), v: fmt(valueOf[o](i)),
                                             n, cells: say(n !== 1 ? "word_cells" : "word_cell"), more}),
             rs.map((r) => [stretched[o], r]).concat(rs.map((r) => [result, r])));
      }
    }
    const total = prod(shown);
    const forwardSteps = cells(shown).map((r, k) => {
      const ia = pA.source(r), ib = pB.source(r);
      return {text: say("step_cell", {k: k + 1, total, info: result.cells[k].info}),
              lit: [[own.a, ia], [own.b, ib], [stretched.a, r], [stretched.b, r], [result, r]]
                .map(([gr, i]) => [gr.id, flat(i, gr.shape)]), set: {}};
    });
    const forward = {
      rows: [[own.a, own.b], [stretched.a, sym(symbol), stretched.b, sym("="), result]],
      notes: [say("note_forward", {shape_a: shapeA, sym: symbol, shape_b: shapeB, real}),
              describe(big.a, "A", real), describe(big.b, "B", real)],
      steps: forwardSteps};

    // --- backward view --------------------------------------------------------------------
    const up = grid("g", say("title_upstream", {real}), shown, real, (r) => fmt(gAt(r)), "g",
                    upstreamWords(upstream));
    const refs = {}, sentGrids = {}, gradGrids = {};
    for (const o of "ab") {
      const name = o.toUpperCase();
      refs[o] = grid(name, say("title_input", {name, shape: realIn[o]}), shownIn[o], realIn[o],
                     (i) => fmt(valueOf[o](i)), o, say("subtitle_values"));
    }
    const sentShown = (o, r) => SENT[op][o](gAt(r), valueOf.a(pA.source(r)), valueOf.b(pB.source(r)));
    for (const o of "ab") {
      const name = o.toUpperCase();
      sentGrids[o] = grid(`to ${name}`, say("title_sent", {name}), shown, real,
                          (r) => fmt(sentShown(o, r)), o, say("subtitle_sent", {rule: rule(op, o)}),
                          (r) => isCopy(o, r));
      const copied = big[o].copied;
      gradGrids[o] = grid(`${name}.grad`, say("title_input", {name: `${name}.grad`, shape: realIn[o]}),
                          shownIn[o], realIn[o], (i) => fmt(gradAt[o](i)), o,
                          say("subtitle_grad", {name, axes: copied.length
                            ? say("axes_some", {word: axesWord(copied), axes: copied.join(", ")})
                            : say("axes_none")}));
    }
    for (const r of cells(shown)) {
      const ia = pA.source(r), ib = pB.source(r);
      link(up, r, say("info_upstream", {cell: cellName("g", r), v: fmt(gAt(r)), c: cellName("C", r),
                                        a: cellName("A", ia), b: cellName("B", ib)}),
           [[sentGrids.a, r], [sentGrids.b, r], [gradGrids.a, ia], [gradGrids.b, ib]]);
      for (const [o, i] of [["a", ia], ["b", ib]]) {
        const filled = ruleWithNumbers(op, o, fmt(gAt(r)), fmt(valueOf.a(ia)), fmt(valueOf.b(ib)),
                                       fmt(sentShown(o, r)));
        link(sentGrids[o], r, say("info_sent", {c: cellName("C", r), x: cellName(o.toUpperCase(), i),
                                                rule: rule(op, o), filled}),
             [[up, r], [refs.a, ia], [refs.b, ib], [gradGrids[o], i]]);
      }
    }
    const sums = {a: readers("a"), b: readers("b")};
    for (const o of "ab") {
      for (const {index: i, rs} of sums[o]) {
        const terms = rs.map((r) => fmt(sentShown(o, r)));
        link(gradGrids[o], i, `${cellName(o.toUpperCase() + ".grad", i)} = `
                              + sumText(terms, fmt(gradAt[o](i)), counts[o]),
             rs.map((r) => [sentGrids[o], r]).concat(rs.map((r) => [up, r])));
      }
    }
    const sumsSentence = (o) => {
      const name = o.toUpperCase(), axes = big[o].copied, drawn = sums[o][0].rs.length;
      if (!axes.length) return say("note_sums_none", {name, shape: realIn[o]});
      const n = axes.reduce((c, ax) => c * real[ax], 1);
      return say("note_sums", {name, shape: realIn[o], n, word: axesWord(axes), axes: axes.join(", "),
                               drawn: drawn < n ? say("note_sums_drawn", {drawn}) : ""});
    };
    const backward = {
      rows: [[refs.a, refs.b],
             [up, sym("→"), sentGrids.a, sym("sum →"), gradGrids.a],
             [sentGrids.b, sym("sum →"), gradGrids.b]],
      notes: [say("note_backward", {upstream: upstreamWords(upstream), real}),
              sumsSentence("a"), sumsSentence("b")],
      steps: backwardSteps(sums, sentShown, sentGrids, gradGrids, counts)};
    if (op === "*" || op === "/") backward.notes.push(say("note_mul_div", {sym: symbol}));
    return finish("broadcast", say("headline", {shape_a: shapeA, sym: symbol, shape_b: shapeB, real}),
                  forward, backward, atReal, size, shown);
  }

  function backwardSteps(sums, sentShown, sentGrids, gradGrids, counts) {
    const most = (o) => Math.max(...sums[o].map(({rs}) => rs.length));
    const nSteps = Math.max(most("a"), most("b"));
    const frames = [];
    for (let s = 0; s <= nSteps; s++) {
      const frame = {lit: [], set: {}};
      const example = [];
      for (const o of "ab") {
        const gg = gradGrids[o], gid = gg.id;
        frame.set[gid] = {};
        for (const {index: i, rs} of sums[o]) {
          const done = rs.slice(0, s);
          frame.set[gid][flat(i, gg.shape)] = formatNumber(done.reduce((t, r) => t + sentShown(o, r), 0));
          if (s > 0 && s <= rs.length) {
            frame.lit.push([sentGrids[o].id, flat(rs[s - 1], sentGrids[o].shape)]);
            frame.lit.push([gid, flat(i, gg.shape)]);
          }
        }
        const {index: first, rs} = sums[o][0];
        const terms = rs.slice(0, s).map((r) => paren(formatNumber(sentShown(o, r))));
        example.push(say("step_so_far", {cell: cellName(gid, first),
                                         terms: terms.length ? terms.join(" + ") + " = " : "",
                                         value: frame.set[gid][flat(first, gg.shape)]}));
      }
      const head = s === 0 ? say("step_zero") : say("step_n", {s, n: nSteps});
      const left = [..."ab"].filter((o) => counts[o] > most(o))
        .map((o) => say("step_left", {name: o.toUpperCase(), count: counts[o]}));
      frame.text = [head].concat(example.map((e) => e + ".")).join(" ")
        + (left.length ? say("step_left_all", {parts: left.join("; ")}) : "");
      frames.push(frame);
    }
    return frames;
  }

  function matmulPicture(shapeA, shapeB, upstream, typed, seed) {
    if (shapeA.length !== 2 || shapeB.length !== 2) {
      throw new ShapeError(say("matmul_not_2d", {shape_a: shapeA, shape_b: shapeB}));
    }
    const [n, k] = shapeA, [k2, m] = shapeB;
    if (k !== k2) throw new ShapeError(say("matmul_no_align", {shape_a: shapeA, shape_b: shapeB, k, k2}));
    const real = [n, m];
    const S = LIMITS.MAX_SIDE;
    const sn = Math.min(n, S), sk = Math.min(k, S), sm = Math.min(m, S);
    const shownA = [sn, sk], shownB = [sk, sm], shown = [sn, sm];
    const size = Math.max(n * k, k * m, n * m);
    const atReal = size <= LIMITS.MAX_COMPUTE && n * k * m <= 50 * LIMITS.MAX_COMPUTE;
    const cA = atReal ? shapeA : shownA, cB = atReal ? shapeB : shownB, cC = atReal ? real : shown;
    const [a, b] = operands(cA, cB, seed, "@");
    const g = upstreamValues(upstream, typed, real, shown, atReal, seed);
    const A = (i, p) => a[i * cA[1] + p], B = (p, j) => b[p * cB[1] + j], G = (i, j) => g[i * cC[1] + j];
    const inner = cA[1], rows = cC[0], cols = cC[1];
    const C = (i, j) => { let t = 0; for (let q = 0; q < inner; q++) t += A(i, q) * B(q, j); return t; };
    const dA = (i, p) => { let t = 0; for (let j = 0; j < cols; j++) t += G(i, j) * B(p, j); return t; };
    const dB = (p, j) => { let t = 0; for (let i = 0; i < rows; i++) t += A(i, p) * G(i, j); return t; };
    const fmt = formatNumber;
    const at2 = (fn) => ([i, j]) => fmt(fn(i, j));

    const gA = grid("A", say("mm_title_a", {shape: shapeA}), shownA, shapeA, at2(A), "a", say("mm_sub_a"));
    const gB = grid("B", say("mm_title_b", {shape: shapeB}), shownB, shapeB, at2(B), "b", say("mm_sub_b"));
    const gC = grid("C", say("mm_title_c", {shape: real}), shown, real, at2(C), "out", say("mm_sub_c"));
    const linkProduct = ([outGrid, name, total], [leftGrid, leftName, left], [rightGrid, rightName, right], realInner) => {
      const innerShown = leftGrid.shape[1];
      for (const [i, j] of cells(outGrid.shape)) {
        const terms = [];
        for (let q = 0; q < innerShown; q++) terms.push(`${paren(fmt(left(i, q)))}×${paren(fmt(right(q, j)))}`);
        const lit = [];
        for (let q = 0; q < innerShown; q++) lit.push([leftGrid, [i, q]]);
        for (let q = 0; q < innerShown; q++) lit.push([rightGrid, [q, j]]);
        link(outGrid, [i, j], say("mm_info_product", {name, i, j, left: leftName, right: rightName,
                                                      sum: sumText(terms, fmt(total(i, j)), realInner)}), lit);
      }
    };
    linkProduct([gC, "C", C], [gA, "A", A], [gB, "B", B], k);
    for (const [i, p] of cells(shownA)) {
      const lit = [];
      for (let j = 0; j < sm; j++) lit.push([gC, [i, j]]);
      for (let j = 0; j < sm; j++) lit.push([gB, [p, j]]);
      link(gA, [i, p], say("mm_info_a", {i, p, v: fmt(A(i, p)), m}), lit);
    }
    for (const [p, j] of cells(shownB)) {
      const lit = [];
      for (let i = 0; i < sn; i++) lit.push([gC, [i, j]]);
      for (let i = 0; i < sn; i++) lit.push([gA, [i, p]]);
      link(gB, [p, j], say("mm_info_b", {p, j, v: fmt(B(p, j)), n}), lit);
    }
    const forwardSteps = cells(shown).map(([i, j], t) => {
      const lit = [["C", t]];
      for (let p = 0; p < sk; p++) lit.push(["A", i * sk + p]);
      for (let p = 0; p < sk; p++) lit.push(["B", p * sm + j]);
      return {text: say("step_cell", {k: t + 1, total: sn * sm, info: gC.cells[t].info}), lit, set: {}};
    });
    const forward = {rows: [[gA, sym("@"), gB, sym("="), gC]],
                     notes: [say("mm_note_forward", {shape_a: shapeA, shape_b: shapeB, real, k, k2})],
                     steps: forwardSteps};

    const up = upstreamWords(upstream);
    const gdC = grid("dC", say("mm_title_dc", {shape: real}), shown, real, at2(G), "g", say("mm_sub_dc", {upstream: up}));
    const gdC2 = grid("dC ", say("mm_title_dc", {shape: real}), shown, real, at2(G), "g", say("mm_sub_dc2"));
    const gBT = grid("B.T", say("mm_title_bt", {shape: [m, k]}), [sm, sk], [m, k], ([j, p]) => fmt(B(p, j)), "b", say("mm_sub_bt"));
    const gAT = grid("A.T", say("mm_title_at", {shape: [k, n]}), [sk, sn], [k, n], ([p, i]) => fmt(A(i, p)), "a", say("mm_sub_at"));
    const gdA = grid("A.grad", say("mm_title_da", {shape: shapeA}), shownA, shapeA, at2(dA), "a", say("mm_sub_da"));
    const gdB = grid("B.grad", say("mm_title_db", {shape: shapeB}), shownB, shapeB, at2(dB), "b", say("mm_sub_db"));
    linkProduct([gdA, "A.grad", dA], [gdC, "dC", G], [gBT, "B.T", (j, p) => B(p, j)], m);
    linkProduct([gdB, "B.grad", dB], [gAT, "A.T", (p, i) => A(i, p)], [gdC2, "dC", G], n);
    for (const [gr, other] of [[gdC, gdC2], [gdC2, gdC]]) {
      for (const [i, j] of cells(shown)) {
        const lit = [[other, [i, j]]];
        for (let p = 0; p < sk; p++) lit.push([gdA, [i, p]]);
        for (let p = 0; p < sk; p++) lit.push([gdB, [p, j]]);
        link(gr, [i, j], say("mm_info_dc", {i, j, v: fmt(G(i, j))}), lit);
      }
    }
    for (const [j, p] of cells([sm, sk])) {
      const lit = [];
      for (let i = 0; i < sn; i++) lit.push([gdA, [i, p]]);
      link(gBT, [j, p], say("mm_info_bt", {j, p, v: fmt(B(p, j))}), lit);
    }
    for (const [p, i] of cells([sk, sn])) {
      const lit = [];
      for (let j = 0; j < sm; j++) lit.push([gdB, [p, j]]);
      link(gAT, [p, i], say("mm_info_at", {p, i, v: fmt(A(i, p))}), lit);
    }
    const frames = [];
    for (let s = 0; s <= Math.max(sm, sn); s++) {
      const frame = {lit: [], set: {"A.grad": {}, "B.grad": {}}};
      for (const [i, p] of cells(shownA)) {
        let t = 0;
        for (let j = 0; j < Math.min(s, sm); j++) t += G(i, j) * B(p, j);
        frame.set["A.grad"][i * sk + p] = fmt(t);
      }
      for (const [p, j] of cells(shownB)) {
        let t = 0;
        for (let i = 0; i < Math.min(s, sn); i++) t += A(i, p) * G(i, j);
        frame.set["B.grad"][p * sm + j] = fmt(t);
      }
      if (s > 0 && s <= sm) {
        for (let i = 0; i < sn; i++) frame.lit.push(["dC", i * sm + s - 1]);
        for (let p = 0; p < sk; p++) frame.lit.push(["B.T", (s - 1) * sk + p]);
      }
      if (s > 0 && s <= sn) {
        for (let p = 0; p < sk; p++) frame.lit.push(["A.T", p * sn + s - 1]);
        for (let j = 0; j < sm; j++) frame.lit.push(["dC ", (s - 1) * sm + j]);
      }
      frame.text = s === 0 ? say("mm_step_zero") : say("mm_step_n", {s, m, n, c: s - 1});
      frames.push(frame);
    }
    const backward = {
      rows: [[gdC, sym("@"), gBT, sym("="), gdA], [gAT, sym("@"), gdC2, sym("="), gdB]],
      notes: [say("mm_note_shapes", {shape_a: shapeA, shape_b: shapeB, real, bt: [m, k], at: [k, n]}),
              say("mm_note_counts", {m, n})],
      steps: frames};
    return finish("matmul", say("headline", {shape_a: shapeA, sym: "@", shape_b: shapeB, real}),
                  forward, backward, atReal, size, shown);
  }

  function alt(view, headline) {
    const parts = [headline + "."];
    for (const row of view.rows) {
      for (const item of row) {
        if (item.kind !== "grid") continue;
        const values = item.cells.slice(0, 12).map((c) => c.v).join(", ");
        const more = item.cells.length > 12 ? ", …" : "";
        const cut = item.cut ? ` (${item.cut})` : "";
        parts.push(say("alt_grid", {title: item.title, subtitle: item.subtitle, values, more, cut}));
      }
    }
    return parts.join(" ");
  }

  function finish(mode, headline, forward, backward, atReal, size, shown) {
    const where = atReal ? say("where_real_static", {size})
                         : say("where_shown_static", {size, most: LIMITS.MAX_COMPUTE, shown});
    for (const view of [forward, backward]) {
      const cut = [...new Set(view.rows.flat().filter((i) => i.kind === "grid" && i.cut).map((i) => i.cut))].sort();
      if (cut.length) view.notes.push(say("too_big", {cuts: cut.join("; ")}));
      view.notes.push(where);
      view.alt = alt(view, headline);
    }
    return {mode, headline, error: "", computed_at: atReal ? "real" : "shown",
            views: {forward, backward}};
  }

  // picture.picture: everything the browser draws for A op B, as plain data.
  function picture(shapeA, shapeB, op = "+", upstream = "ones", typed = "", seed = 0) {
    ready();
    if (op === "@") return matmulPicture([...shapeA], [...shapeB], upstream, typed, seed);
    return broadcastPicture([...shapeA], [...shapeB], op, upstream, typed, seed);
  }

  // widget._alignment: the two shapes lined up at their right ends, ✗ under the clashes.
  function alignment(shapeA, shapeB) {
    const ndim = Math.max(shapeA.length, shapeB.length);
    const pa = Array(ndim - shapeA.length).fill("").concat(shapeA.map(String));
    const pb = Array(ndim - shapeB.length).fill("").concat(shapeB.map(String));
    const marks = pa.map((x, i) => (x && pb[i] && x !== pb[i] && x !== "1" && pb[i] !== "1" ? "✗" : "✓"));
    const w = Math.max(...pa.concat(pb, ["✓"]).map((s) => [...s].length)) + 2;
    const row = (label, cs) => label + cs.map((c) => c.padStart(w)).join("");
    return [row("A:    ", pa), row("B:    ", pb), row("      ", marks)].join("\n");
  }

  // --- the model broadcast_backward.js talks to (anywidget's interface) -----------------
  // It does what widget.BroadcastBackward does in the kernel: update() on every change,
  // prefetch() of the other operators once a picture is drawn.
  function createModel({shapeA = "3,1", shapeB = "1,4", op = "+", upstream = "ones", seed = 0} = {}) {
    ready();
    const state = {shape_a: shapeA, shape_b: shapeB, op, upstream, typed: "", view: "forward",
                   data: {}, presets: PRESETS, revision: 0};
    const listeners = new Map();
    let good = {}, goodInputs = "", error = null, changed = new Set();
    const inputs = () => JSON.stringify([state.shape_a, state.shape_b, state.upstream, state.typed]);
    const fire = (names) => {
      for (const name of names) for (const cb of listeners.get(`change:${name}`) || []) cb();
    };
    const publish = (values, names) => { Object.assign(state, values); fire(names); };

    function problem(text, detail = "") {
      error = text;
      publish({data: {ops: good.ops || {}, error: text, error_detail: detail},
               revision: state.revision + 1}, ["data", "revision"]);
    }
    function update() {
      let first;
      try {
        const a = parseShape(state.shape_a, "A"), b = parseShape(state.shape_b, "B");
        first = picture(a, b, state.op, state.upstream, state.typed, seed);
      } catch (err) {
        if (err instanceof ShapeError) {
          let detail = "";
          if (err.message.includes("do not broadcast")) {
            detail = alignment(parseShape(state.shape_a), parseShape(state.shape_b));
          }
          problem(err.message, detail);
        } else {
          problem(say("went_wrong", {kind: err.name || "Error", error: err.message}));
        }
        return;
      }
      good = {ops: {[state.op]: first}, error: "", error_detail: ""};
      goodInputs = inputs();
      error = null;
      publish({data: good, revision: state.revision + 1}, ["data", "revision"]);
    }
    function prefetch() {
      const ops = good.ops || {};
      const current = ops[state.op];
      if (error !== null || state.op === "@" || !current || goodInputs !== inputs()) return;
      const rows = current.views.forward.rows;
      const real = rows[rows.length - 1][rows[rows.length - 1].length - 1].real;
      if (prod(real) > LIMITS.ALL_OPS_UP_TO || ["+", "-", "*", "/"].every((o) => ops[o])) return;
      const a = parseShape(state.shape_a, "A"), b = parseShape(state.shape_b, "B");
      const all = {};
      for (const o of ["+", "-", "*", "/"]) all[o] = ops[o] || picture(a, b, o, state.upstream, state.typed, seed);
      good = {...good, ops: all};
      publish({data: good}, ["data"]);
    }
    const model = {
      get: (name) => state[name],
      set(name, value) { state[name] = value; changed.add(name); fire([name]); },
      save_changes() {
        const names = changed;
        changed = new Set();
        const onlyOp = [...names].every((n) => n === "op" || n === "view");
        if (!names.size || (onlyOp && !names.has("op"))) return;
        if (onlyOp && error === null && (good.ops || {})[state.op] && goodInputs === inputs()) return;
        update();
      },
      on(event, cb) { if (!listeners.has(event)) listeners.set(event, []); listeners.get(event).push(cb); },
      send(message) {
        if (message && message.type === "prefetch" && message.revision === state.revision) prefetch();
      },
    };
    update();
    prefetch();
    return model;
  }

  return {configure, say, tuple, ShapeError, parseShape, capShapes, broadcastPair, Generator,
          formatNumber, parseGradient, picture, alignment, createModel};
});

"use strict";
// pbem's shared helpers for the rules replay (docs/protocol.md §1, §3, §4): the refusal a
// game throws (P.ChoiceError, as pbem/games/base.py), canonical JSON, a synchronous
// SHA-256 and HMAC-SHA256, and the labelled draws. Written from the protocol document;
// the same file runs in the verifier page and in node (tests/pages/node.py).
(function (P) {
  const utf8 = new TextEncoder();

  // ------------------------------------------------------------------ refusals

  class ChoiceError extends Error {
    // code: "syntax", "not-allowed", "not-your-turn" or a game's own (docs/protocol.md §2)
    constructor(message, code, legal) {
      super(message);
      this.code = code || "refused";
      this.legal = legal || null;
    }
  }

  // ------------------------------------------------------------------ Python's text forms

  // what Python's repr() writes for a string (the rules quote what they refuse)
  function reprString(s) {
    const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
    let out = quote;
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if (ch === "\\") out += "\\\\";
      else if (ch === quote) out += "\\" + ch;
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (ch === "\t") out += "\\t";
      else if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
      else if (c >= 0x80 && !printable(ch)) {
        out += c <= 0xff ? "\\x" + c.toString(16).padStart(2, "0")
          : c <= 0xffff ? "\\u" + c.toString(16).padStart(4, "0") : "\\U" + c.toString(16).padStart(8, "0");
      } else out += ch;
    }
    return out + quote;
  }
  const NOT_PRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;
  function printable(ch) { return ch === " " || !NOT_PRINTABLE.test(ch); }

  const QUOTE_LIMIT = 80;
  // pbem/text.py shorten: at most limit characters (code points), cut with an ellipsis
  function shorten(text, limit = QUOTE_LIMIT) {
    const s = typeof text === "string" ? text : pyStr(text);
    const chars = Array.from(s);
    return chars.length <= limit ? s : chars.slice(0, limit - 1).join("") + "…";
  }
  // pbem/text.py quote: repr of a shortened string; other values shortened after repr
  function quote(text, limit = QUOTE_LIMIT) {
    return typeof text === "string" ? reprString(shorten(text, limit)) : shorten(pyRepr(text), limit);
  }
  // Python's str()/repr() of plain JSON values, as messages show them
  function pyRepr(v) {
    if (v === null || v === undefined) return "None";
    if (v === true) return "True";
    if (v === false) return "False";
    if (typeof v === "string") return reprString(v);
    if (typeof v === "number") return String(v);
    if (Array.isArray(v)) return "[" + v.map(pyRepr).join(", ") + "]";
    return "{" + Object.keys(v).map((k) => reprString(k) + ": " + pyRepr(v[k])).join(", ") + "}";
  }
  function pyStr(v) { return typeof v === "string" ? v : pyRepr(v); }
  // Python's truth of a JSON value (an empty list or object is false there, true in JavaScript)
  function pyTrue(v) {
    if (Array.isArray(v)) return v.length > 0;
    if (v !== null && typeof v === "object") return Object.keys(v).length > 0;
    return Boolean(v);
  }

  // Python's type name of a JSON value, and what tuple(v), dict(v or {}) and {**v} make of
  // one (the rules and the replay take their input as Python does, refusals included)
  const typeName = (v) => (v === null || v === undefined ? "NoneType" : typeof v === "boolean" ? "bool" : typeof v === "string" ? "str"
    : typeof v === "number" ? (Number.isInteger(v) ? "int" : "float") : Array.isArray(v) ? "list" : "dict");
  function pyIter(v) {
    if (typeof v === "string") return Array.from(v);
    if (Array.isArray(v)) return v;
    if (v !== null && typeof v === "object") return Object.keys(v);
    throw new TypeError(`'${typeName(v)}' object is not iterable`);
  }
  const falsy = (v) => v === null || v === undefined || v === false || v === 0 || v === "" || (Array.isArray(v) && !v.length)
    || (typeof v === "object" && !Array.isArray(v) && !Object.keys(v).length);
  function pyDict(v) {
    if (falsy(v)) return {};
    if (typeof v === "object" && !Array.isArray(v)) return Object.assign({}, v);
    const out = {};
    pyIter(v).forEach((item, i) => {
      const pair = typeof item === "string" || Array.isArray(item) ? pyIter(item) : null;
      if (pair === null) throw new TypeError(`cannot convert dictionary update sequence element #${i} to a sequence`);
      if (pair.length !== 2) throw new RangeError(`dictionary update sequence element #${i} has length ${pair.length}; 2 is required`);
      if (pair[0] !== null && typeof pair[0] === "object") throw new TypeError(`unhashable type: '${typeName(pair[0])}'`);
      out[typeof pair[0] === "string" ? pair[0] : pyRepr(pair[0])] = pair[1];
    });
    return out;
  }
  function pyMapping(v) {
    if (falsy(v)) return {};
    if (typeof v === "object" && !Array.isArray(v)) return v;
    throw new TypeError(`'${typeName(v)}' object is not a mapping`);
  }

  // ------------------------------------------------------------------ canonical JSON (§1)

  function byCodePoint(a, b) {
    // Python sorts strings by code point; JavaScript's < compares UTF-16 units
    const x = Array.from(a), y = Array.from(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const d = x[i].codePointAt(0) - y[i].codePointAt(0);
      if (d) return d;
    }
    return x.length - y.length;
  }
  const ESC = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };
  function canonicalString(s) {
    if (/[\ud800-\udfff]/.test(s) && !s.isWellFormed()) throw new TypeError("a string with a lone surrogate has no canonical JSON");
    return '"' + s.replace(/["\\\u0000-\u001f]/g, (c) => ESC[c] || "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")) + '"';
  }
  function canonical(v) {
    if (v === null) return "null";
    if (v === true) return "true";
    if (v === false) return "false";
    if (typeof v === "number") {
      if (!Number.isInteger(v)) throw new TypeError("floats have no canonical JSON");
      return String(v);
    }
    if (typeof v === "string") return canonicalString(v);
    if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
    if (typeof v === "object") {
      const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort(byCodePoint);
      return "{" + keys.map((k) => canonicalString(k) + ":" + canonical(v[k])).join(",") + "}";
    }
    throw new TypeError(`no canonical JSON for ${typeof v}`);
  }
  const canonicalBytes = (v) => utf8.encode(canonical(v));

  // ------------------------------------------------------------------ SHA-256 (FIPS 180-4)

  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2]);
  const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
  const W = new Uint32Array(64);

  function compress(H, bytes, off) {
    for (let i = 0; i < 16; i++, off += 4) W[i] = (bytes[off] << 24) | (bytes[off + 1] << 16) | (bytes[off + 2] << 8) | bytes[off + 3];
    for (let i = 16; i < 64; i++) {
      const a = W[i - 15], b = W[i - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
    }
    let a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    H[0] = (H[0] + a) | 0; H[1] = (H[1] + b) | 0; H[2] = (H[2] + c) | 0; H[3] = (H[3] + d) | 0;
    H[4] = (H[4] + e) | 0; H[5] = (H[5] + f) | 0; H[6] = (H[6] + g) | 0; H[7] = (H[7] + h) | 0;
  }

  // the hash of `bytes`, continuing from state H after `done` bytes (a multiple of 64)
  function finish(H, bytes, done) {
    H = H.slice();
    const full = bytes.length - (bytes.length % 64);
    for (let off = 0; off < full; off += 64) compress(H, bytes, off);
    const rest = bytes.length - full, total = done + bytes.length;
    const tail = new Uint8Array(rest < 56 ? 64 : 128);
    tail.set(bytes.subarray(full));
    tail[rest] = 0x80;
    const bits = total * 8;
    const at = tail.length - 8;
    tail[at + 3] = Math.floor(bits / 2 ** 32) & 0xff;
    tail[at + 4] = (bits >>> 24) & 0xff; tail[at + 5] = (bits >>> 16) & 0xff;
    tail[at + 6] = (bits >>> 8) & 0xff; tail[at + 7] = bits & 0xff;
    for (let off = 0; off < tail.length; off += 64) compress(H, tail, off);
    const out = new Uint8Array(32);
    for (let i = 0; i < 8; i++) { out[4 * i] = H[i] >>> 24; out[4 * i + 1] = H[i] >>> 16; out[4 * i + 2] = H[i] >>> 8; out[4 * i + 3] = H[i]; }
    return out;
  }
  const bytesOf = (data) => (typeof data === "string" ? utf8.encode(data) : data);
  const sha256 = (data) => finish(new Int32Array(IV), bytesOf(data), 0);
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  const sha256Hex = (data) => hex(sha256(data));
  function unhex(text) {
    if (typeof text !== "string" || text.length % 2 || /[^0-9a-fA-F]/.test(text)) return null;
    const out = new Uint8Array(text.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(text.substr(2 * i, 2), 16);
    return out;
  }
  function concat(...parts) {
    const all = parts.map(bytesOf);
    const out = new Uint8Array(all.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of all) { out.set(p, at); at += p.length; }
    return out;
  }

  // HMAC-SHA256 (RFC 2104) keyed once: the states after the padded key's block
  function hmacKey(key) {
    key = bytesOf(key);
    if (key.length > 64) key = sha256(key);
    const ipad = new Uint8Array(64), opad = new Uint8Array(64);
    for (let i = 0; i < 64; i++) { ipad[i] = (key[i] || 0) ^ 0x36; opad[i] = (key[i] || 0) ^ 0x5c; }
    const inner = new Int32Array(IV), outer = new Int32Array(IV);
    compress(inner, ipad, 0); compress(outer, opad, 0);
    return (message) => finish(outer, finish(inner, bytesOf(message), 64), 64);
  }
  const hmac = (key, message) => hmacKey(key)(message);

  // ------------------------------------------------------------------ commitments (§3)

  function commitment(game, round, step, player, choice, saltHex) {
    return sha256Hex(concat("pbem-commit-v1", new Uint8Array(1),
      canonical({ game, round, step, player, choice }), new Uint8Array(1), unhex(saltHex)));
  }
  const clientEntropy = (seeds) => sha256Hex(canonical(seeds));
  function batchDigest(game, round, step, reveals) {
    const entries = {};
    for (const [p, r] of Object.entries(reveals)) entries[p] = r.default ? { choice: r.choice, default: true } : { choice: r.choice, salt: r.salt };
    return sha256Hex(concat("pbem-batch-v1", new Uint8Array(1), canonical({ game, round, step, reveals: entries })));
  }

  // ------------------------------------------------------------------ labelled draws (§4)

  const SPACE = 2 ** 32;
  // rng.below(label, n) and rng.block(label, counter), as pbem/protocol/rng.py computes them;
  // `draws`, when a list, receives every {label, n, value} (as pbem replay --json)
  function Random(seed, game, entropy) {
    const mac = hmacKey(typeof seed === "string" ? unhex(seed) : seed);
    const prefix = canonical(["pbem-rng-v1", game, entropy]).slice(0, -1) + ",";
    const rng = {
      draws: null,
      block(label, counter) {
        if (typeof label !== "string" || !Number.isInteger(counter)) throw new TypeError("a draw label is a string and its counter an integer");
        return mac(prefix + canonicalString(label) + "," + counter + "]");
      },
      below(label, n) {
        if (!(n >= 1 && n <= SPACE)) throw new RangeError(`range size must be 1..2**32, got ${n}`);
        const limit = SPACE - (SPACE % n);
        for (let counter = 0; ; counter++) {
          const b = rng.block(label, counter);
          const u = ((b[0] << 24) >>> 0) + (b[1] << 16) + (b[2] << 8) + b[3];
          if (u < limit) {
            const value = u % n;
            if (rng.draws) rng.draws.push({ label, n, value });
            return value;
          }
        }
      },
    };
    return rng;
  }

  P.ChoiceError = ChoiceError;
  P.base = { pyTrue, typeName, pyIter, pyDict, pyMapping, reprString, quote, shorten, pyRepr, pyStr, canonical, canonicalBytes, canonicalString, byCodePoint,
             sha256, sha256Hex, hex, unhex, concat, hmac, hmacKey, commitment, clientEntropy, batchDigest, Random };
  P.games = P.games || {};
})(globalThis.PBEM = globalThis.PBEM || {});

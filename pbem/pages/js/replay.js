"use strict";
// The protocol replay of an export (docs/protocol.md §2, §3, §11, §14, §16), as `pbem audit`
// does it: every event in order against the rules of its kind and, once the seed is
// known, against the game's rules (P.games[name]): requests opened and answered, sealed
// steps, reveals with their applied choice and illegal code, defaults and NMR, deadlines
// as pauses, resumes and extensions move them, replacements, the stand-in policy
// stand-in-v1 or -v2, anonymous steps and their disclosure. Without the seed it checks what
// can be checked without the game's state (as the audit does before the seed is out).
// Signatures themselves (Ed25519) are checked by the page's other pass; everything around
// them (who may sign, nonces, the key in force) is checked here too.
(function (P) {
  const B = P.base, quote = B.quote, shorten = B.shorten;
  const PUBLIC_PREFIX = "pbem-ed25519-public:", SECRET_PREFIX = "pbem-ed25519-secret:";
  const KNOWN_GAMES = ["tortuga", "tortuga1667"]; // the game types pbem has (pbem/games/__init__.py)
  const STAND_IN_POLICIES = ["stand-in-v1", "stand-in-v2"]; // pbem/protocol/standin.py

  class Refused extends Error {
    constructor(message, seq) { super(message); this.seq = seq || null; }
  }
  // a field missing or of the wrong type: the audit says "malformed KIND event: ..."
  class Malformed extends Error {}
  class UnknownGame extends Error {
    constructor(name) { super(`the rules of game type ${quote(name)} are not known to this page, so they were not replayed`); this.game = name; }
  }
  const need = (d, k) => {
    if (d === null || typeof d !== "object" || Array.isArray(d) || !(k in d)) throw new Malformed(`field '${k}' missing`);
    return d[k];
  };
  const has = (d, k) => d !== null && typeof d === "object" && Object.prototype.hasOwnProperty.call(d, k);
  const get = (d, k, dflt) => (has(d, k) ? d[k] : dflt === undefined ? null : dflt);
  const isInt = (v) => typeof v === "number" && Number.isInteger(v);

  // Python's == on JSON values (True == 1, 1 == 1.0; dicts by content)
  function pyEq(a, b) {
    if (typeof a === "boolean") a = a ? 1 : 0;
    if (typeof b === "boolean") b = b ? 1 : 0;
    if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => pyEq(x, b[i]));
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => has(b, k) && pyEq(a[k], b[k]));
  }
  const typeName = B.typeName;

  // ------------------------------------------------------------------ times (pbem/protocol/times.py)
  const AT = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z$/;
  function parseAt(at) {
    const m = typeof at === "string" ? AT.exec(at) : null;
    if (m) {
      const [y, mo, d, h, mi, s] = m.slice(1).map(Number);
      const t = Date.UTC(y, mo - 1, d, h, mi, s);
      const back = new Date(t);
      if (y >= 1 && back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d && h < 24 && mi < 60 && s < 60) {
        return t - (y < 100 ? 0 : 0);
      }
    }
    throw new Malformed(`time data ${B.pyRepr(at)} does not match format '%Y-%m-%dT%H:%M:%SZ'`);
  }
  function fmtAt(t) {
    const d = new Date(t), p = (n, w = 2) => String(n).padStart(w, "0");
    return `${p(d.getUTCFullYear(), 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}T${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}Z`;
  }
  function shift(at, seconds) {
    if (typeof seconds !== "number" && typeof seconds !== "boolean") throw new TypeError(`unsupported type for timedelta seconds component: ${typeName(seconds)}`);
    return fmtAt(parseAt(at) + Number(seconds) * 1000);
  }
  const secondsBetween = (earlier, later) => Math.trunc((parseAt(later) - parseAt(earlier)) / 1000);
  // the log's one spelling of a time that exists (another would compare wrongly as a string)
  function isAt(text) {
    if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/.test(text)) return false;
    try { return fmtAt(parseAt(text)) === text; } catch (e) { return false; }
  }
  function checkTime(text, what) {
    try { if (typeof text === "string" && fmtAt(parseAt(text)) === text) return text; } catch (e) { /* below */ }
    throw new Refused(`${what} ${quote(text)} is not a time; give one like 2030-01-05T18:00:00Z (UTC)`);
  }
  const MAX_AHEAD = 365 * 86400;  // a deadline an event sets lies at most a year after that event
  function checkAhead(until, at, what) {
    if (secondsBetween(at, until) > MAX_AHEAD) throw new Refused(`${what} ${until} is more than a year (365 days) after now (${at}); the latest allowed is ${shift(at, MAX_AHEAD)}`);
    return until;
  }
  function duration(seconds) {
    for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) if (seconds % size === 0) return `${seconds / size}${unit}`;
    return `${seconds}s`;
  }
  function short(seconds) {
    for (const [unit, size] of [["h", 3600], ["m", 60]]) if (seconds % size === 0) return `${seconds / size}${unit}`;
    return `${seconds}s`;
  }

  // Python's bytes.fromhex: pairs of hex digits, ASCII white space between pairs
  function fromhex(text) {
    if (typeof text !== "string") throw new Malformed(`fromhex() argument must be str, not ${text === null ? "None" : typeName(text)}`);
    const out = [], space = " \t\n\u000b\f\r", digit = (c) => (c !== undefined && /^[0-9a-fA-F]$/.test(c) ? parseInt(c, 16) : -1);
    for (let i = 0; i < text.length;) {
      if (space.includes(text[i])) { i++; continue; }
      const top = digit(text[i]);
      if (top < 0) throw new Malformed(`non-hexadecimal number found in fromhex() arg at position ${i}`);
      const bot = digit(text[i + 1]);
      if (bot < 0) throw new Malformed(`non-hexadecimal number found in fromhex() arg at position ${i + 1}`);
      out.push(top * 16 + bot);
      i += 2;
    }
    return Uint8Array.from(out);
  }

  // ------------------------------------------------------------------ keys, commitments
  function b64strict(text) {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4) return null;
    let bin;
    try { bin = atob(text); } catch (e) { return null; }
    const raw = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    return btoa(String.fromCharCode(...raw)) === text ? raw : null;
  }
  function parseKey(text, kind = "public") {
    const prefix = kind === "public" ? PUBLIC_PREFIX : SECRET_PREFIX, other = kind === "public" ? SECRET_PREFIX : PUBLIC_PREFIX;
    const expected = `a ${kind} key is ${B.reprString(prefix)} followed by base64 of 32 bytes`;
    if (typeof text !== "string") throw new Refused(`${expected}, got ${typeName(text)}`);
    text = text.trim();
    if (text.startsWith(other)) throw new Refused(`this is a ${kind === "public" ? "secret" : "public"} key; ${expected}`);
    if (!text.startsWith(prefix)) throw new Refused(`${expected}; this text does not start with ${B.reprString(prefix)}`);
    const raw = b64strict(text.slice(prefix.length).replace(/\s+/g, ""));
    if (raw === null) throw new Refused(`${expected}; the part after the prefix is not valid base64`);
    if (raw.length !== 32) throw new Refused(`${expected}; the base64 decodes to ${raw.length} bytes`);
    return B.hex(raw);
  }
  function parseHex64(text, what, meaning) {
    const expected = `${what} must be 64 hexadecimal characters (${meaning})`;
    if (typeof text !== "string") throw new Refused(`${expected}, got ${typeName(text)}`);
    const value = text.replace(/^[\s\u0085]+|[\s\u0085]+$/g, "");
    if (/^[0-9a-fA-F]{64}$/.test(value)) return value.toLowerCase();
    const chars = Array.from(value);
    for (let i = 0; i < chars.length; i++) if (!/[0-9a-fA-F]/.test(chars[i])) throw new Refused(`${expected}, contains ${B.reprString(chars[i])} at position ${i + 1}`);
    if (chars.length !== 64) throw new Refused(`${expected}, got ${chars.length} characters`);
    return value.toLowerCase();
  }
  const parseCommitment = (t) => parseHex64(t, "commitment", "sha256");
  const parseSalt = (t) => parseHex64(t, "salt", "32 random bytes");
  // pbem/protocol/commit.py: the fields of a commitment, checked before it is made
  function makeCommitment(game, round, step, player, choice, salt) {
    for (const [name, v] of [["game", game], ["player", player], ["choice", choice]]) {
      if (typeof v !== "string") throw new Refused(`${name} must be a string, got ${typeName(v)}`);
    }
    for (const [name, v] of [["round", round], ["step", step]]) if (!isInt(v)) throw new Refused(`${name} must be an integer, got ${typeName(v)}`);
    return B.commitment(game, round, step, player, choice, parseSalt(salt));
  }
  function commitmentMatches(commitment, game, round, step, player, choice, salt) {
    const expected = parseCommitment(commitment);
    return makeCommitment(game, round, step, player, choice, salt) === expected;
  }

  // ------------------------------------------------------------------ the session
  const kkey = (p, r, s, k) => JSON.stringify([p, r, s, k]);

  class Session {
    constructor(game, seed, held) {
      Object.assign(this, {
        game, seed, held, anonSteps: [], disclosed: false, meta: null, rules: null, players: [], keys: {}, clientSeeds: {},
        started: false, rng: null, state: null, sealed: null, nonces: new Set(), openedAt: new Map(), seq: 0, lastAt: "",
        seedRevealed: false, publicSteps: new Map(), paused: null, dueOver: new Map(), extUsed: {}, hands: {},
        orphaned: new Set(), missed: {}, standingIn: new Set(), applied: [], standInMoves: 0,
      });
    }
    get version3() { return has(this.meta, "judge_key"); }
    get finished() { return this.state !== null && this.rules.result(this.state) !== null; }
    player(name) {
      if (!this.players.includes(name)) throw new Refused(`no player ${quote(name)} in game ${this.game}; players: ${this.players.join(", ")}`);
      return name;
    }
    pending() {
      if (this.state === null) return [];
      if (!this._pending || this._pending[0] !== this.state) this._pending = [this.state, this.rules.pending(this.state)];
      return this._pending[1];
    }
    requestsOf(player) { return this.pending().filter((r) => r.player === player); }
    // the game's round and step now (§2): as the game's headline gives them (Tortuga 1667's
    // are its turn and vote numbers), else the state's own fields
    roundStep() {
      const h = this.rules.headline ? this.rules.headline(this.state) : this.state;
      return [h.round, h.step];
    }
    owed() {
      const out = [], step = this.sealed;
      if (step) {
        if (!allCommitted(step)) for (const p of owesCommit(step)) out.push([p, "commit", true, kkey(p, step.round, step.step, step.kind)]);
        else for (const p of owesReveal(step)) out.push([p, "reveal", true, kkey(p, step.round, step.step, "reveal")]);
      }
      for (const r of this.pending()) if (!r.sealed) out.push([r.player, r.kind, false, kkey(r.player, r.round, r.step, r.kind)]);
      return out;
    }

    apply(kind, data, at, seq) {
      const handler = typeof kind === "string" && has(HANDLERS, kind) ? HANDLERS[kind] : null;
      if (!handler) throw new Refused(`unknown event kind ${quote(kind)}`);
      if (kind !== "created" && !this.meta) throw new Refused("the log must begin with a 'created' event");
      if (data === null || typeof data !== "object" || Array.isArray(data) || typeof at !== "string") throw new Refused(`malformed ${kind} event: data must be an object and 'at' a time`);
      if (!isAt(at)) throw new Refused(`event time ${quote(at)} is not a time as the log writes them (UTC, to the second, like 2026-01-31T18:00:00Z)`);
      if (at < this.lastAt) throw new Refused(`event time ${at} is earlier than the event before it (${this.lastAt})`);
      this.applied = [];
      this.index = seq;
      try {
        handler.call(this, data, at);
      } catch (e) {
        if (e instanceof Malformed) throw new Refused(`malformed ${kind} event: ${e.message}`);
        if (e instanceof P.ChoiceError) throw new Refused(e.message);
        if (e instanceof Refused || e instanceof UnknownGame) throw e;
        if (e instanceof TypeError || e instanceof RangeError) throw new Refused(`malformed ${kind} event: ${e.message}`);
        throw e;
      }
      this.seq = seq !== undefined && seq !== null ? seq : this.seq + 1;
      this.lastAt = at;
      if (this.state !== null) this.trackOpen(at);
    }

    // --- the rules of each kind (pbem/protocol/session.py)
    created(d, at) {
      if (this.meta) throw new Refused("the game was already created");
      const type = need(d, "game_type");
      if (!KNOWN_GAMES.includes(type)) throw new Refused(`unknown game type ${quote(type)}; known: ${KNOWN_GAMES.join(", ")}`);
      this.rules = has(P.games, type) ? P.games[type] : null;
      if (!this.rules) throw new UnknownGame(type); // a game pbem has, whose rules this page lacks
      try { this.players = this.rules.checkPlayers(need(d, "players")); } catch (e) {
        if (e instanceof Malformed || e instanceof TypeError) throw e;
        throw new Refused(e.message);
      }
      this.meta = Object.assign({}, d);
      if (has(d, "stand_in_policy") && !STAND_IN_POLICIES.includes(d.stand_in_policy)) throw new Refused(`unknown stand-in policy ${B.pyRepr(d.stand_in_policy)}; this pbem knows ${STAND_IN_POLICIES.join(", ")}`);
      this.keys = {};
      for (const [player, key] of Object.entries(B.pyDict(get(d, "keys")))) this.key({ player, public_key: key }, at);
      if (has(d, "judge_key")) {
        try { parseKey(d.judge_key); } catch (e) { throw new Refused(`the judge key: ${e.message}`); }
      }
      const after = get(d, "stand_in_after");  // as pbem new --stand-in-after takes it
      if (after !== null && !((typeof after === "number" && Number.isInteger(after) && after >= 1) || (typeof after === "bigint" && after >= 1n))) throw new Refused(`stand_in_after is a number of defaults in a row, 1 or more, not ${quote(after)}`);
      if (this.seed !== null && B.sha256Hex(this.seed) !== need(d, "seed_hash")) throw new Refused("the server seed at hand does not match the published seed hash");
    }
    beforeStart(what) { if (this.started) throw new Refused(`game ${this.game} has already started: ${what} only before that`); }
    // the moderator's before the start; a change signed with the key the seat holds at any time
    key(d, at) {
      const player = this.player(need(d, "player"));
      const signed = get(d, "signature") !== null;
      if (this.started && !signed) {
        if (player in this.keys) throw new Refused(`game ${this.game} has started, so ${player}'s key changes only by a block signed with the key the seat holds: ${player} makes one with pbem key ${this.game} ${player} NEW-PUBLIC-KEY --sign-with OLD.key, and the judge records it (pbem submit)`);
        this.beforeStart("keys can be registered");
      }
      let raw;
      try { raw = parseKey(need(d, "public_key")); } catch (e) { if (e instanceof Malformed) throw e; throw new Refused(`the key of ${player}: ${e.message}`); }
      if (signed) this.signedFields(player, d, "key change");
      const holder = Object.keys(this.keys).find((p) => p !== player && parseKey(this.keys[p]) === raw);
      if (holder !== undefined) throw new Refused(`this public key is already registered for ${holder}; each player needs their own key pair (pbem keygen)`);
      if (signed) this.nonces.add(d.nonce); // the signature itself, against the key the seat held: the page's Ed25519 pass
      this.keys[player] = d.public_key;
    }
    signedFields(player, d, what) {
      if (!(player in this.keys)) throw new Refused(`${player} has no registered key in this game, so a signed ${what} cannot be checked`);
      const nonce = get(d, "nonce");
      if (typeof nonce !== "string" || nonce.length < 1 || Array.from(nonce).length > 64) throw new Refused("a signed submission needs a nonce of 1 to 64 characters");
      if (this.nonces.has(nonce)) throw new Refused(`this signed ${what} was already used (replayed submission); sign a fresh one`);
    }
    client_seed(d, at) {
      this.beforeStart("client seeds can be added");
      const text = need(d, "seed");
      if (typeof text !== "string" || !text || Array.from(text).length > 200) throw new Refused("a client seed is any text of 1 to 200 characters");
      const player = this.player(need(d, "player"));
      if (this.version3 && (B.pyTrue(this.meta.require_signatures) || has(d, "signature"))) this.checkSeedSignature(player, d);
      this.clientSeeds[player] = text;
    }
    checkSeedSignature(player, d) {
      const signature = get(d, "signature"), nonce = get(d, "nonce");
      if (signature === null) throw new Refused(`this game requires signed submissions, client seeds too: ${player} makes a signed block with pbem client-seed ${this.game} ${player} TEXT --sign-with KEYFILE`);
      if (!(player in this.keys)) throw new Refused(`${player} has no registered key in this game, so a signed client seed cannot be checked; register the key first (pbem key)`);
      if (typeof nonce !== "string" || nonce.length < 1 || Array.from(nonce).length > 64) throw new Refused("a signed submission needs a nonce of 1 to 64 characters");
      if (this.nonces.has(nonce)) throw new Refused("this signed client_seed was already used (replayed submission); sign a fresh one");
      this.nonces.add(nonce); // the signature itself: the page's Ed25519 pass
    }
    started_(d, at) {
      this.beforeStart("play can start");
      if (B.pyTrue(this.meta.require_signatures)) {
        const missing = this.players.filter((p) => !(p in this.keys));
        if (missing.length) throw new Refused(`this game requires signatures but has no key for ${missing.join(", ")}; register each with: pbem key ${this.game} PLAYER PUBLIC-KEY`);
      }
      if (this.seedRevealed) throw new Refused(`the server seed of game ${this.game} is published, so play cannot start`);
      const entropy = B.clientEntropy(this.clientSeeds);
      if (!pyEq(need(d, "client_entropy"), entropy)) throw new Refused(`client entropy ${quote(d.client_entropy)} is not the hash of the client seeds (${entropy})`);
      this.started = true;
      if (this.seed !== null) {
        this.rng = B.Random(this.seed, this.game, entropy);
        try { this.state = this.rules.setup(this.players, get(this.meta, "options") || {}, this.rng); } catch (e) {
          if (e instanceof P.ChoiceError || e instanceof Refused) throw e;
          throw new Malformed(e.message);
        }
        this.openSealed();
      }
    }
    seed_revealed(d, at) {
      if (this.seedRevealed) throw new Refused(`the seed of ${this.game} is already revealed`);
      const bytes = fromhex(need(d, "seed"));
      if (B.sha256Hex(bytes) !== need(this.meta, "seed_hash")) throw new Refused("the revealed seed does not match the seed hash published at creation");
      if (this.owesDisclosure()) throw new Refused("the held reveals of anonymous steps are disclosed (a 'disclosed' event) before the seed is revealed");
      this.seedRevealed = true;
    }

    // --- sealed steps
    openSealed() {
      const sealed = this.pending().filter((r) => r.sealed);
      if (!sealed.length) { this.sealed = null; return; }
      const [round, step] = [sealed[0].round, sealed[0].step];
      if (!this.sealed || this.sealed.round !== round || this.sealed.step !== step) {
        this.sealed = { round, step, waiting: sealed.map((r) => r.player), commits: {}, defaulted: new Set(), revealed: new Set(),
                        kind: sealed[0].kind, anonymous: Boolean(sealed[0].anonymous), held: {} };
      }
    }
    checkSignature(kind, d, by = "player") {
      const signed = B.pyTrue(this.meta.require_signatures);
      if (by === "stand-in" && get(d, "by") === by) {
        if (get(d, "signature") !== null) throw new Refused(`a ${kind} made by the stand-in carries no signature`);
        return;
      }
      if (get(d, "by", "player") !== by) throw new Refused(`this ${kind} says it was made by the ${quote(get(d, "by"))}, but the commitment was made by the ${by}`);
      if (signed && by === "moderator") throw new Refused(`this game requires signed submissions, so the moderator cannot seal for ${d.player}; ${d.player} seals and signs: pbem seal --context TOKEN CHOICE --key FILE`);
      if (get(d, "signature") === null) {
        if (signed && by === "player") {
          const how = kind === "decide" ? "pbem decide --context TOKEN CHOICE --key FILE" : "pbem seal --context TOKEN CHOICE --key FILE";
          throw new Refused(`this game requires signed submissions: the player makes a signed block with ${how}`);
        }
        return;
      }
      const player = need(d, "player");
      if (!(player in this.keys)) throw new Refused(`${player} has no registered key in this game, so a signed block cannot be checked; send the choice unsigned (keys can only be registered before play starts)`);
      const nonce = get(d, "nonce");
      if (typeof nonce !== "string" || nonce.length < 1 || Array.from(nonce).length > 64) throw new Refused("a signed submission needs a nonce of 1 to 64 characters");
      if (this.nonces.has(nonce)) throw new Refused(`this signed ${kind} was already used (replayed submission); sign a fresh one`);
      this.nonces.add(nonce); // the signature itself: the page's Ed25519 pass, against this.keys
    }
    needState() {
      if (this.seedRevealed || this.disclosed) throw new Refused(`the server seed of game ${this.game} is published, so it takes no more moves`);
      if (!this.started) throw new Refused(`game ${this.game} has not started yet (pbem start)`);
      if (this.state !== null && this.finished) throw new Refused(`game ${this.game} is over`);
    }
    sealedFor(d, what) {
      const step = this.sealed;
      if (!step) throw new Refused(`no sealed step is open now, so no ${what} is expected`);
      const player = this.player(need(d, "player"));
      if (!pyEq(need(d, "round"), step.round) || !pyEq(need(d, "step"), step.step)) {
        throw new Refused(`this ${what} is for round ${shorten(B.pyStr(d.round))} step ${shorten(B.pyStr(d.step))}, but the open sealed step is round ${step.round} step ${step.step}`);
      }
      if (!step.waiting.includes(player)) throw new Refused(`${player} takes no part in sealed step ${step.round}.${step.step} (waiting for: ${step.waiting.join(", ")})`);
      return step;
    }

    commit(d, at) {
      this.needState();
      if (this.state === null) return this.public_("commit", d);
      const step = this.sealedFor(d, "commitment"), player = d.player;
      if (allCommitted(step)) throw new Refused(`all commitments of step ${step.round}.${step.step} are in; commitments can no longer be made or replaced, send the reveal`);
      if (step.defaulted.has(player)) throw new Refused(`${player} was already defaulted (NMR) in this step`);
      const commitment = parseCommitment(need(d, "commitment"));
      if (Object.entries(step.commits).some(([p, c]) => p !== player && c.commitment === commitment)) throw new Refused("this commitment was already made by another player; seal your own choice");
      const by = get(d, "by", "player");
      if (by === "stand-in") this.standInCheck(player, d, "commit");
      else if (by !== "player" && by !== "moderator") throw new Refused(`a commitment is made by the player, the moderator or the stand-in, not ${quote(by)}`);
      this.checkSignature("commit", d, by);
      step.commits[player] = { commitment, by };
      this.orphaned.delete(JSON.stringify([player, step.round, step.step]));  // a new commitment replaces the former player's
      if (by !== "stand-in") this.cameBack(player);
    }
    nmr(d, at) {
      this.needState();
      if (this.state === null) {
        this.checkRecordedDeadline([get(d, "player"), null, null, null], at, d);
        return this.public_("nmr", d);
      }
      const step = this.sealedFor(d, "default"), player = d.player;
      // a commitment its former person sealed at home and left with: the moderator may default it (§16)
      const orphan = this.orphaned.has(JSON.stringify([player, step.round, step.step])) && !allCommitted(step);
      if ((player in step.commits && !orphan) || step.defaulted.has(player) || allCommitted(step)) throw new Refused(`${player} owes no commitment in step ${step.round}.${step.step}`);
      if (orphan && get(d, "forced") !== true) throw new Refused(`${player}'s commitment was sealed by the seat's former player: only a forced default (pbem nmr ${this.game} ${player} --force) settles it before every commitment is in`);
      this.checkDeadline([player, step.round, step.step, step.kind], at, d);
      delete step.commits[player];
      step.defaulted.add(player);
      this.missedOne(player);
    }
    reveal(d, at) {
      this.needState();
      if (this.state === null) return this.public_("reveal", d);
      const step = this.sealedFor(d, "reveal"), player = d.player;
      if (step.anonymous) throw new Refused(`step ${step.round}.${step.step} is anonymous: its reveals are held by the judge (a reveal_held event), not published`);
      if (!allCommitted(step)) throw new Refused(`reveals open once every commitment is in; still waiting for: ${owesCommit(step).join(", ")}`);
      if (step.revealed.has(player)) throw new Refused(`${player}'s choice for step ${step.round}.${step.step} is already settled (revealed, or the default applied) and cannot be changed; this reveal is not the recorded one`);
      if (!(player in step.commits)) throw new Refused(`${player} owes no reveal in step ${step.round}.${step.step}`);
      const salt = parseSalt(need(d, "salt"));
      const choice = need(d, "choice");
      if (typeof choice !== "string" || !commitmentMatches(step.commits[player].commitment, this.game, step.round, step.step, player, choice, salt)) {
        throw new Refused(`this reveal does not match ${player}'s commitment for step ${step.round}.${step.step} (wrong choice or salt, or made for another step)`);
      }
      this.checkSignature("reveal", d, step.commits[player].by);
      if (step.commits[player].by === "player") this.cameBack(player);
      const [applied, illegal, code] = this.legalOrDefault(player, choice);
      expect(d, "applied", applied);
      expect(d, "illegal", illegal);
      if (code !== null) expect(d, "illegal_code", code);
      else if (has(d, "illegal_code")) throw new Refused(`recorded illegal_code ${quote(d.illegal_code)}, but the revealed choice is legal`);
      step.revealed.add(player);
      this.play(player, applied);
    }
    default_(d, at) {
      this.needState();
      if (this.state === null) {
        if (!this.afterNmr(d)) this.checkRecordedDeadline([get(d, "player"), null, null, null], at, d);
        return this.public_("default", d);
      }
      const player = this.player(need(d, "player"));
      const step = this.sealed;
      let kind;
      if (step && step.waiting.includes(player) && !step.revealed.has(player)) {
        if (!pyEq(get(d, "round"), step.round) || !pyEq(get(d, "step"), step.step)) {
          throw new Refused(`this default is for round ${shorten(B.pyStr(get(d, "round")))} step ${shorten(B.pyStr(get(d, "step")))}, but the open sealed step is round ${step.round} step ${step.step}`);
        }
        if (!allCommitted(step)) throw new Refused(`reveals open once every commitment is in; still waiting for: ${owesCommit(step).join(", ")}`);
        if (step.anonymous && has(d, "choice")) throw new Refused("a default in an anonymous step does not show its choice publicly (the disclosure at the end does)");
        if (!step.defaulted.has(player)) {
          this.checkDeadline([player, step.round, step.step, "reveal"], at, d);
          this.missedOne(player);
        }
        step.revealed.add(player);
        kind = step.kind;
        expect(d, "sealed", true);
        if (step.anonymous) return this.heldDefault(step, player, d);
      } else {
        expect(d, "sealed", false);
        kind = need(d, "kind");
        const request = this.requestsOf(player).find((r) => r.kind === kind);
        if (!request) throw new Refused(`${player} owes no ${B.pyStr(kind)} choice now`);
        const [r, s] = this.roundStep();
        if (!pyEq(get(d, "round"), r) || !pyEq(get(d, "step"), s)) {
          throw new Refused(`this default is for round ${shorten(B.pyStr(get(d, "round")))} step ${shorten(B.pyStr(get(d, "step")))}, the game is at round ${r} step ${s}`);
        }
        this.checkDeadline([player, request.round, request.step, kind], at, d);
        this.missedOne(player);
      }
      const applied = this.rules.default(this.state, player, kind);
      expect(d, "choice", applied);
      this.play(player, applied);
    }
    decide(d, at) {
      this.needState();
      if (this.state === null) return this.public_("decide", d);
      const player = this.player(need(d, "player"));
      for (const r of this.requestsOf(player)) if (r.sealed) throw new Refused(`${player} owes a sealed choice: commit to it and reveal it, not decide`);
      const canonical = this.rules.check(this.state, player, need(d, "choice"));
      const [r, s] = this.roundStep();
      if (!pyEq(get(d, "round"), r) || !pyEq(get(d, "step"), s)) {
        throw new Refused(`this decision is for round ${shorten(B.pyStr(get(d, "round")))} step ${shorten(B.pyStr(get(d, "step")))}, the game is at round ${r} step ${s}`);
      }
      if (get(d, "by") === "stand-in") {
        this.standInCheck(player, d, "decide");
        this.checkSignature("decide", d, "stand-in");
      } else {
        this.checkSignature("decide", d);
        this.cameBack(player);
      }
      expect(d, "applied", canonical);
      this.play(player, canonical);
    }
    legalOrDefault(player, choice) {
      try { return [this.rules.check(this.state, player, choice), null, null]; } catch (e) {
        if (!(e instanceof P.ChoiceError)) throw e;
        return [this.rules.default(this.state, player, this.sealed.kind), e.message, e.code];
      }
    }
    checkDeadline(key, at, d) {
      if (this.version3) return this.checkRecordedDeadline(key, at, d);
      const deadline = get(this.meta, "deadline_seconds");
      if (B.pyTrue(get(d, "forced")) || !deadline) return;
      const player = key[0], k = kkey(...key);
      if (this.paused) throw new Refused(`game ${this.game} is paused (since ${this.paused.since}), so no deadline runs; resume it (pbem resume ${this.game}) or use --force to apply the default anyway`);
      const opened = this.openedAt.get(k), due = this.baseDue(k);
      if (due && at < due) {
        const moved = this.dueOver.has(k) ? ", moved by the moderator's discretion" : "";
        throw new Refused(`${player}'s deadline has not passed (opened ${opened}, deadline ${duration(deadline)}${moved}: due ${due}); use --force to apply the default anyway`);
      }
    }
    play(player, choice) { this.applyRules(player, choice); this.openSealed(); }
    applyRules(player, choice) {
      this.state = this.rules.apply(this.state, player, choice, this.rng);
      this.applied.push(this.state);
    }
    trackOpen(at) {
      const next = new Map();
      for (const [, , , key] of this.owed()) next.set(key, this.openedAt.has(key) ? this.openedAt.get(key) : at);
      this.openedAt = next;
      this.keepDues();
    }

    // --- without the seed (pbem/protocol/session.py _public)
    public_(kind, d) {
      if (kind === "sealed_batch") return this.publicBatch(d);
      const player = this.player(need(d, "player"));
      const round = need(d, "round"), stepN = need(d, "step");
      if (!isInt(round) || !isInt(stepN)) throw new Refused(`round and step must be integers in a ${kind} event`);
      const key = JSON.stringify([round, stepN]);
      const keys = [...this.publicSteps.keys()].map((k) => JSON.parse(k));
      const latest = keys.length ? keys.reduce((a, b) => (cmpKey(a, b) >= 0 ? a : b)) : null;
      if ((kind === "commit" || kind === "nmr") && latest && cmpKey([round, stepN], latest) < 0) throw new Refused(`a ${kind} for step ${round}.${stepN} after step ${latest[0]}.${latest[1]} had begun`);
      if ((kind === "commit" || kind === "nmr") && !this.publicSteps.has(key)) {
        const open = [...this.publicSteps.entries()].filter(([, st]) => st.anonymous && !st.batched);
        if (open.length) { const k = JSON.parse(open[0][0]); throw new Refused(`a ${kind} for step ${round}.${stepN} before the batch of anonymous step ${k[0]}.${k[1]}`); }
      }
      if (!this.publicSteps.has(key)) this.publicSteps.set(key, { commits: {}, done: new Set(), closed: false, how: {}, anonymous: null, digest: null, batched: false });
      const step = this.publicSteps.get(key);
      if (step.batched && (["commit", "nmr", "reveal", "reveal_held"].includes(kind) || B.pyTrue(get(d, "sealed")))) throw new Refused(`a ${kind} for step ${round}.${stepN} after its batch`);
      const anonymous = kind === "reveal_held" || (kind === "default" && B.pyTrue(get(d, "sealed")) && !has(d, "choice"));
      if (kind === "reveal" || kind === "reveal_held" || (kind === "default" && B.pyTrue(get(d, "sealed")))) {
        if (step.anonymous !== null && step.anonymous !== anonymous) throw new Refused(`step ${round}.${stepN} mixes public and held reveals (and defaults that show their choice)`);
        step.anonymous = anonymous;
      }
      if (kind === "commit" || kind === "nmr") {
        if (step.closed) throw new Refused(`a ${kind} for step ${round}.${stepN} after its reveals had begun`);
        if (kind === "commit") {
          const by = get(d, "by", "player");
          this.checkSignature("commit", d, by);
          step.commits[player] = [parseCommitment(need(d, "commitment")), by];
        } else step.commits[player] = [null, "nmr"];
        return;
      }
      if (kind === "reveal_held") {
        const [committed, by] = step.commits[player] || [null, null];
        if (step.done.has(player) || committed === null) throw new Refused(`the held reveal does not follow an open commitment of ${player} for step ${round}.${stepN}`);
        if (get(d, "by", "player") !== by) throw new Refused(`this reveal says it was made by the ${quote(get(d, "by"))}, but the commitment was made by the ${by}`);
      } else if (kind === "reveal") {
        const [committed, by] = step.commits[player] || [null, null];
        if (step.done.has(player) || committed === null || !commitmentMatches(committed, this.game, round, stepN, player, need(d, "choice"), parseSalt(need(d, "salt")))) {
          throw new Refused(`the reveal does not match an open commitment of ${player} for step ${round}.${stepN}`);
        }
        this.checkSignature("reveal", d, by);
      } else if (kind === "default" && B.pyTrue(get(d, "sealed"))) {
        if (step.done.has(player)) throw new Refused(`${player} already revealed in step ${round}.${stepN}`);
      } else if (kind === "decide") {
        this.checkSignature("decide", d, get(d, "by") === "stand-in" ? "stand-in" : "player");
        return;
      } else return;
      step.done.add(player);
      step.how[player] = kind === "default" ? "default" : "reveal";
      step.closed = true;
    }
    publicBatch(d) {
      const round = need(d, "round"), stepN = need(d, "step"), key = JSON.stringify([round, stepN]);
      const step = this.publicSteps.get(key);
      if (!step || step.batched || step.anonymous === false) throw new Refused(`a batch for step ${B.pyStr(round)}.${B.pyStr(stepN)}, which has no held reveals to batch (or has its batch)`);
      const missing = Object.keys(step.commits).filter((p) => !step.done.has(p));
      if (missing.length) throw new Refused(`the batch of step ${round}.${stepN} before every reveal was in (still missing: ${missing.join(", ")})`);
      const digest = get(d, "digest");
      if (typeof digest !== "string" || !/^[0-9a-f]{64}$/.test(digest)) throw new Refused("a batch digest is 64 lowercase hex characters");
      Object.assign(step, { anonymous: true, batched: true, digest });
    }
    afterNmr(d) {
      const step = this.publicSteps.get(JSON.stringify([get(d, "round"), get(d, "step")])) || { commits: {} };
      return B.pyTrue(get(d, "sealed")) && ((step.commits || {})[get(d, "player")] || [null, null])[1] === "nmr";
    }

    // --- anonymous steps (pbem/protocol/anonymous.py)
    reveal_held(d, at) {
      const extra = Object.keys(d).filter((k) => !["player", "round", "step", "by"].includes(k)).sort();
      if (extra.length) throw new Refused(`a held reveal shows only player, round, step and by, not ${extra.join(", ")}`);
      this.needState();
      if (this.state === null) return this.public_("reveal_held", d);
      const step = this.sealedFor(d, "reveal");
      if (!step.anonymous) throw new Refused(`step ${step.round}.${step.step} is not anonymous: its reveals are public events`);
      const player = d.player;
      if (!allCommitted(step)) throw new Refused(`reveals open once every commitment is in; still waiting for: ${owesCommit(step).join(", ")}`);
      if (step.revealed.has(player)) throw new Refused(`${player}'s choice for step ${step.round}.${step.step} is already settled (revealed, or the default applied) and cannot be changed; this reveal is not the recorded one`);
      if (!(player in step.commits)) throw new Refused(`${player} owes no reveal in step ${step.round}.${step.step}`);
      const by = step.commits[player].by;
      if (get(d, "by", "player") !== by) throw new Refused(`this reveal says it was made by the ${quote(get(d, "by"))}, but the commitment was made by the ${by}`);
      const source = this.held, seq = source ? source.seq : null;
      const record = source ? source.get(step.round, step.step, player) : null;
      if (record === null) {
        if (seq !== null) throw new Refused(`the disclosure holds no reveal of ${player} for step ${step.round}.${step.step}, which the log says was held`, seq);
        throw new Refused(`the held reveal of ${player} for step ${step.round}.${step.step} is not at hand: the log reveals the seed but discloses no held reveals (a 'disclosed' event comes before 'seed_revealed')`);
      }
      let matches = false, choice = record.choice;
      try { matches = typeof choice === "string" && commitmentMatches(step.commits[player].commitment, this.game, step.round, step.step, player, choice, parseSalt(need(record, "salt"))); } catch (e) { matches = false; }
      if (!matches) throw new Refused(`this ${seq !== null ? "held reveal" : "reveal"} does not match ${player}'s commitment for step ${step.round}.${step.step} (wrong choice or salt, or made for another step)`, seq);
      try { this.checkSignature("reveal", Object.assign({}, record, { player, round: step.round, step: step.step, by }), by); } catch (e) {
        if (e instanceof Refused) throw new Refused(`the held reveal of ${player}: ${e.message}`, seq);
        throw e;
      }
      const [applied, illegal, code] = this.legalOrDefault(player, choice);
      const full = { choice, salt: record.salt, by, applied, illegal };
      if (code !== null) full.illegal_code = code;
      for (const k of ["signature", "nonce"]) if (get(record, k) !== null) full[k] = record[k];
      if (seq !== null && !pyEq(record, full)) {
        const wrong = [...new Set([...Object.keys(record), ...Object.keys(full)])].filter((k) => !pyEq(get(record, k), get(full, k))).sort();
        throw new Refused(`the disclosed reveal of ${player} for step ${step.round}.${step.step} differs from the rules in ${wrong.join(", ")}`, seq);
      }
      step.held[player] = full;
      step.revealed.add(player);
    }
    heldDefault(step, player, d) {
      if (has(d, "choice")) throw new Refused("a default in an anonymous step does not show its choice publicly (the disclosure at the end does)");
      step.held[player] = { default: true, choice: this.rules.default(this.state, player, step.kind) };
    }
    sealed_batch(d, at) {
      this.needState();
      if (this.state === null) return this.public_("sealed_batch", d);
      const step = this.sealed;
      if (!step || !step.anonymous) throw new Refused("no anonymous sealed step is open, so no batch is expected");
      if (!pyEq(need(d, "round"), step.round) || !pyEq(need(d, "step"), step.step)) throw new Refused(`this batch is for step ${B.pyStr(d.round)}.${B.pyStr(d.step)}, but the open sealed step is ${step.round}.${step.step}`);
      if (!allCommitted(step) || owesReveal(step).length) {
        const waiting = owesCommit(step).length ? owesCommit(step) : owesReveal(step);
        throw new Refused(`the batch of step ${step.round}.${step.step} comes once every reveal is in; still waiting for: ${waiting.join(", ")}`);
      }
      const reveals = {};
      for (const p of step.waiting) reveals[p] = step.held[p];
      const digest = B.batchDigest(this.game, step.round, step.step, reveals);
      // what the players saw published: a batch without it proves nothing
      if (typeof d.digest !== "string" || !/^[0-9a-f]{64}$/.test(d.digest)) throw new Refused("a batch digest is 64 lowercase hex characters");
      if (!pyEq(d.digest, digest)) throw new Refused(`the batch digest ${quote(d.digest)} is not the digest of the step's held reveals (${digest})`);
      this.anonSteps.push({ round: step.round, step: step.step, reveals });
      for (const p of step.waiting) this.applyRules(p, has(reveals[p], "applied") ? reveals[p].applied : reveals[p].choice);
      this.openSealed();
    }
    disclosure() {
      const out = this.anonSteps.map((s) => Object.assign({}, s));
      const step = this.sealed;
      if (step && step.anonymous && Object.keys(step.held).length) {
        const reveals = {};
        for (const p of step.waiting) if (p in step.held) reveals[p] = step.held[p];
        out.push({ round: step.round, step: step.step, reveals });
      }
      return out;
    }
    owesDisclosure() {
      if (this.disclosed) return false;
      if (this.state === null) return [...this.publicSteps.values()].some((s) => s.anonymous);
      return this.disclosure().length > 0;
    }
    disclosed_(d, at) {
      if (this.disclosed) throw new Refused(`the held reveals of ${this.game} are already disclosed`);
      if (this.seedRevealed) throw new Refused("the disclosure comes before the seed is revealed");
      if (!this.started) throw new Refused(`game ${this.game} has not started, so it has nothing to disclose`);
      const steps = need(d, "steps");
      if (!Array.isArray(steps)) throw new Refused("the disclosure's steps must be a list");
      if (this.state === null) this.publicDisclosed(steps);
      else {
        const expected = this.disclosure();
        if (!pyEq(steps, expected)) {
          const k = expected.findIndex((e, i) => i >= steps.length || !pyEq(steps[i], e));
          const where = k >= 0 ? `step ${expected[k].round}.${expected[k].step}` : "an extra step at the end";
          throw new Refused(`the disclosure does not list exactly the held reveals of the log (first difference: ${where})`);
        }
      }
      this.disclosed = true;
    }
    publicDisclosed(steps) {
      const listed = new Set();
      for (const entry of steps) {
        const key = JSON.stringify([need(entry, "round"), need(entry, "step")]), [r, s] = [entry.round, entry.step];
        const pub = this.publicSteps.get(key);
        if (!pub || !pub.anonymous || listed.has(key)) throw new Refused(`the disclosure lists step ${B.pyStr(r)}.${B.pyStr(s)}, which is no anonymous step of the log (or lists it twice)`);
        listed.add(key);
        const reveals = need(entry, "reveals");
        const names = Object.keys(reveals).sort(B.byCodePoint), settled = Object.keys(pub.how).sort(B.byCodePoint);
        if (names.join("\u0000") !== settled.join("\u0000")) throw new Refused(`the disclosure of step ${r}.${s} lists ${names.join(", ")}, the log settled ${settled.join(", ")}`);
        for (const [player, record] of Object.entries(reveals)) {
          if (Boolean(get(record, "default")) !== (pub.how[player] === "default")) throw new Refused(`the disclosure of step ${r}.${s} says ${player} ${get(record, "default") ? "defaulted" : "revealed"}; the log says otherwise`);
          if (get(record, "default")) continue;
          const [committed] = pub.commits[player];
          let matches;
          try { matches = commitmentMatches(committed, this.game, r, s, player, need(record, "choice"), parseSalt(need(record, "salt"))); } catch (e) {
            if (e instanceof Refused) throw new Malformed(e.message); // a ValueError there: "malformed disclosed event"
            throw e;
          }
          if (!matches) throw new Refused(`the disclosed reveal of ${player} for step ${r}.${s} does not match their commitment`);
        }
        if (pub.digest !== null && B.batchDigest(this.game, r, s, reveals) !== pub.digest) throw new Refused(`the disclosed reveals of step ${r}.${s} do not give its batch digest`);
      }
      const missing = [...this.publicSteps.entries()].filter(([k, st]) => st.anonymous && !listed.has(k));
      if (missing.length) { const k = JSON.parse(missing[0][0]); throw new Refused(`the disclosure leaves out anonymous step ${k[0]}.${k[1]}`); }
    }

    // --- seats and time (pbem/protocol/seats.py)
    missedOne(player) {
      this.missed[player] = (this.missed[player] || 0) + 1;
      const after = get(this.meta, "stand_in_after");
      if (after && this.missed[player] >= after) this.standingIn.add(player);
    }
    cameBack(player) { delete this.missed[player]; this.standingIn.delete(player); }
    baseDue(k) {
      if (this.dueOver.has(k)) return this.dueOver.get(k);
      const deadline = get(this.meta, "deadline_seconds"), opened = this.openedAt.get(k);
      return deadline && opened ? shift(opened, deadline) : null;
    }
    keepDues() {
      if (this.dueOver.size) for (const k of [...this.dueOver.keys()]) if (!this.openedAt.has(k)) this.dueOver.delete(k);
      if (this.orphaned.size) {
        const step = this.sealed;
        for (const o of [...this.orphaned]) {
          const [p, r, s] = JSON.parse(o);
          if (!(step && !step.revealed.has(p) && r === step.round && s === step.step)) this.orphaned.delete(o);
        }
      }
    }
    discretion(d, kind, who = ["moderator"]) {
      const by = get(d, "by"), reason = get(d, "reason");
      if (!who.includes(by)) throw new Refused(`a ${kind} event names who asked for it: by ${who.join(" or ")}, not ${quote(by)}`);
      if (typeof reason !== "string" || Array.from(reason).length > 300) throw new Refused(`a ${kind} event says why in a reason of up to 300 characters`);
    }
    inPlay(what) {
      if (this.seedRevealed || this.disclosed || (this.state !== null && this.finished)) throw new Refused(`game ${this.game} is over, so it cannot be ${what}; only a game in play can`);
      if (!this.started) throw new Refused(`game ${this.game} has not started, so no deadline runs yet and it cannot be ${what} (pbem start ${this.game})`);
    }
    paused_(d, at) {
      this.discretion(d, "pause");
      if (!d.reason.replace(/^\s+|\s+$/g, "")) throw new Refused("a pause needs a reason the players will read, e.g. --reason 'summer holidays'");
      this.inPlay("paused");
      if (this.paused) throw new Refused(`game ${this.game} is already paused (since ${this.paused.since}); resume it with: pbem resume ${this.game}`);
      this.paused = { since: at, by: d.by, reason: d.reason };
    }
    resumed(d, at) {
      this.discretion(d, "resume");
      if (!this.paused) throw new Refused(`game ${this.game} is not paused, so there is nothing to resume (pbem pause ${this.game} --reason TEXT pauses it)`);
      const until = get(d, "until");
      if (until !== null && checkTime(until, "--until") <= at) throw new Refused(`--until ${until} is not later than now (${at}); give a time after it`);
      if (has(d, "forced") && d.forced !== true) throw new Refused(`'forced' is true or absent, not ${quote(d.forced)}`);
      const forced = get(d, "forced") === true;
      if (until !== null) checkAhead(until, at, "--until");
      if (this.state !== null) {
        const since = this.paused.since, inForce = new Map();
        // the deadline in force: the clock stood still from the pause (or the opening) until now
        for (const [k, opened] of this.openedAt.entries()) {
          const base = this.baseDue(k);
          if (base !== null) inForce.set(k, shift(base, secondsBetween(since > opened ? since : opened, at)));
        }
        const shortened = [...inForce.entries()].filter(([, due]) => until !== null && until < due);
        if (shortened.length && !forced) {
          const latest = [...inForce.values()].reduce((a, b) => (b > a ? b : a));
          throw new Refused(`--until ${until} is earlier than ${JSON.parse(shortened[0][0])[0]}'s deadline in force ${shortened[0][1]} (its deadline before the pause, moved on by the pause): a resume moves deadlines later, never earlier; give ${latest} or later, or use --force (the log marks it forced and the audit names it)`);
        }
        if (forced && !shortened.length) throw new Refused("a resume is marked forced only when it moves a deadline earlier; this one moves none: resume without --force");
        for (const k of this.openedAt.keys()) {
          if (until !== null) this.dueOver.set(k, until);
          else if (inForce.has(k)) this.dueOver.set(k, inForce.get(k));
        }
      }
      this.paused = null;
    }
    extended(d, at) {
      this.discretion(d, "extension", ["moderator", "player"]);
      if (!get(this.meta, "deadline_seconds")) throw new Refused(`game ${this.game} has no deadline (pbem new --deadline 48h), so there is nothing to extend`);
      this.inPlay("given an extension");
      const requests = need(d, "requests");
      if (!Array.isArray(requests) || !requests.length) throw new Refused("an extension names the requests whose deadlines it moves");
      let asker = get(d, "player");
      const allowance = () => Object.assign({ count: 1, max_seconds: 86400 }, B.pyMapping(get(this.meta, "extensions")));
      let rules = null;
      const signed = get(d, "signature") !== null;
      if (signed && d.by !== "player") throw new Refused("only a player's own extension is signed: the moderator's carries no signature");
      if (d.by === "player") {
        rules = allowance();
        asker = this.player(asker);
        if ((this.extUsed[asker] || 0) >= rules.count) throw new Refused(`${asker} has used the extensions this game allows a player (${rules.count}); ask the moderator instead`);
        if (signed) {
          this.signedFields(asker, d, "extension");
          if (!isInt(need(d, "round")) || !isInt(need(d, "step")) || !isInt(need(d, "seconds")) || d.seconds <= 0) {
            throw new Refused("a signed extension names its round and step (whole numbers) and a number of seconds above 0");
          }
        }
      }
      const moved = new Map();
      for (const raw of requests) {
        const item = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? Object.assign({}, raw) : raw;
        const key = [this.player(need(item, "player")), need(item, "round"), need(item, "step"), need(item, "kind")];
        if (asker !== null && key[0] !== asker) throw new Refused(`${B.pyStr(asker)} may only extend their own deadlines, not ${key[0]}'s`);
        const until = checkTime(need(item, "until"), "an extension's time");
        if (signed && (!pyEq(key[1], d.round) || !pyEq(key[2], d.step)
                       || until !== shift(checkTime(need(item, "from"), "an extension's old due"), d.seconds))) {
          throw new Refused(`${asker} signed an extension of round ${d.round} step ${d.step} by ${short(d.seconds)}, but this event moves their ${B.pyStr(key[3])} of round ${B.pyStr(key[1])} step ${B.pyStr(key[2])} from ${B.pyStr(item.from)} to ${until}`);
        }
        if (this.state === null) continue;
        const k = kkey(...key);
        if (!this.openedAt.has(k)) throw new Refused(`${key[0]} owes no ${B.pyStr(key[3])} in round ${B.pyStr(key[1])} step ${B.pyStr(key[2])}, so there is no deadline to extend`);
        const due = this.baseDue(k);
        expect(item, "from", due);
        if (this.paused === null && at >= due) {
          if (d.by !== "moderator") throw new Refused(`the deadline of ${key[0]}'s ${B.pyStr(key[3])} passed at ${due}; an extension must come before it (after it, only the moderator can give a new deadline)`);
          if (until <= at) throw new Refused(`the deadline of ${key[0]}'s ${B.pyStr(key[3])} passed at ${due}; a new deadline must be after now (${at}): give a later time, or a longer extension`);
        }
        if (until <= due) throw new Refused(`an extension moves a deadline later: ${until} is not after ${due}`);
        checkAhead(until, at, "an extension's time");
        if (d.by === "player" && secondsBetween(due, until) > allowance().max_seconds) {
          throw new Refused(`a player may extend a deadline by at most ${short(rules.max_seconds)} in this game; ask for ${short(rules.max_seconds)} or less, or ask the moderator`);
        }
        moved.set(k, until);
      }
      if (signed && this.state !== null) {  // the signature covers the step, so the event moves all of it
        const left = [...this.openedAt.keys()].map((k) => JSON.parse(k))
          .filter((k) => k[0] === asker && pyEq(k[1], d.round) && pyEq(k[2], d.step) && !moved.has(kkey(...k)))
          .map((k) => k[3]).sort(B.byCodePoint);
        if (left.length) throw new Refused(`${asker} signed an extension of everything they owe in round ${d.round} step ${d.step}, but this event leaves their ${left[0]} where it was`);
      }
      if (signed) this.nonces.add(d.nonce); // the signature itself: the page's Ed25519 pass
      for (const [k, until] of moved) this.dueOver.set(k, until);
      if (d.by === "player") this.extUsed[asker] = (this.extUsed[asker] || 0) + 1;
    }
    replaced(d, at) {
      this.discretion(d, "replacement");
      const seat = this.player(need(d, "seat"));
      if (this.seedRevealed || this.disclosed || (this.state !== null && this.finished)) throw new Refused(`game ${this.game} is over, so its seats no longer change hands`);
      if (has(d, "moderator") && d.moderator !== true) throw new Refused(`'moderator' is true (the moderator plays the seat) or absent, not ${quote(d.moderator)}`);
      const key = get(d, "key");
      if (key !== null) {
        let raw;
        try { raw = parseKey(key); } catch (e) { throw new Refused(`the new key of ${seat}: ${e.message}`); }
        if (Object.entries(this.keys).some(([p, k]) => p !== seat && parseKey(k) === raw)) throw new Refused("this public key is already registered for another seat; the new player makes their own key pair (pbem keygen)");
        this.keys[seat] = key;
      } else if (B.pyTrue(this.meta.require_signatures)) {
        throw new Refused(`game ${this.game} takes only signed moves: give the new player's public key with --key`);
      } else delete this.keys[seat];
      this.hands[seat] = (this.hands[seat] || 0) + 1;
      this.cameBack(seat);
      const step = this.sealed;
      if (step && seat in step.commits && !step.revealed.has(seat) && step.commits[seat].by === "player") this.orphaned.add(JSON.stringify([seat, step.round, step.step]));
    }
    stand_in_ended(d, at) {
      this.discretion(d, "stand-in's end", ["moderator", "player"]);
      const seat = this.player(need(d, "player"));
      if (this.seedRevealed || this.disclosed || (this.state !== null && this.finished)) throw new Refused(`game ${this.game} is over, so no seat is taken back from the stand-in`);
      if (this.state === null) return; // a seedless replay does not know who the stand-in plays
      if (!this.standingIn.has(seat)) throw new Refused(`${seat} is not played by the stand-in, so there is nothing to take back` + (get(this.meta, "stand_in_after") ? "" : " (this game has no stand-in)"));
      this.cameBack(seat);
    }

    // --- the judge's discretion (pbem/protocol/discretion.py)
    checkRecordedDeadline(key, at, d) {
      if (!this.version3) return;
      const player = key[0], k = kkey(...key);
      if (!has(d, "deadline")) throw new Refused("this default records no deadline (field 'deadline'): in a game with a judge key every default says the deadline it was judged against");
      if (has(d, "forced") && d.forced !== true) throw new Refused(`'forced' is true or absent, not ${quote(d.forced)}`);
      const recorded = d.deadline, forced = get(d, "forced") === true;
      if (!get(this.meta, "deadline_seconds")) {
        if (recorded !== null) throw new Refused(`the game has no deadline, so the recorded deadline must be null, not ${quote(recorded)}`);
        if (!forced) throw new Refused(`the game has no deadline, so ${B.pyStr(player)} is never late: a default is the judge's discretion and must be marked forced`);
        return;
      }
      if (typeof recorded !== "string" || recorded.length !== 20 || !recorded.endsWith("Z")) throw new Refused(`the recorded deadline ${quote(recorded)} is not a time like 2026-01-31T18:00:00Z`);
      if (this.paused && !forced) throw new Refused(`game ${this.game} is paused (since ${this.paused.since}), so no deadline runs and ${B.pyStr(player)} is not late: a default now must be marked forced`);
      const earliest = this.baseDue(k);
      if (earliest !== null && recorded < earliest) throw new Refused(`the recorded deadline ${recorded} is earlier than ${player}'s deadline ${earliest} (the request opened ${B.pyStr(this.openedAt.has(k) ? this.openedAt.get(k) : null)})`);
      if (at < recorded && !forced) throw new Refused(`${B.pyStr(player)}'s deadline ${recorded} had not passed at ${at}, and the default is not marked forced`);
    }

    // --- the stand-in, policies stand-in-v1 and stand-in-v2 (pbem/protocol/standin.py, docs/rules.md)
    privateRequests(player) {
      const step = this.sealed;
      return (this.seedRevealed ? [] : this.requestsOf(player)).map((r) => {
        const entry = { kind: r.kind, sealed: r.sealed, default: r.default, options: r.options, round: r.round, step: r.step };
        if (r.options === null && r.allOptions) entry.allOptions = r.allOptions;
        if (r.sealed && step) { entry.committed = player in step.commits; entry.defaulted = step.defaulted.has(player); }
        return entry;
      });
    }
    standInCheck(seat, d, kind) {
      if (!this.standingIn.has(seat)) {
        const after = get(this.meta, "stand_in_after");
        throw new Refused(`${seat} is not played by the stand-in` + (after ? ` (it takes a seat after ${after} defaults in a row)` : " (this game has no stand-in: pbem new --stand-in-after N)"));
      }
      if (this.rng === null || this.state === null) return;
      const version = has(this.meta, "stand_in_policy") ? this.meta.stand_in_policy : "stand-in-v1";
      const request = this.privateRequests(seat).find((r) => !(r.sealed && (r.committed || r.defaulted)));
      if (!request) throw new Refused(`${seat} owes nothing the stand-in could answer`);
      let choiceLabel, saltLabel;
      if (version === "stand-in-v1") {
        const index = this.seq + 1; // v1: the event's index, which the judge can move (kept for old logs)
        choiceLabel = `stand-in/${index}`; saltLabel = `stand-in-salt/${index}`;
      } else { // v2: what the move answers: round, step, seat, kind, sealed or open
        const what = `${request.round}/${request.step}/${seat.replace(/%/g, "%25").replace(/\//g, "%2F")}/${request.kind}/${request.sealed ? "sealed" : "open"}`;
        choiceLabel = `stand-in-v2/${what}`; saltLabel = `stand-in-v2-salt/${what}`;
      }
      const options = request.options && request.options.length ? request.options
        : version !== "stand-in-v1" && request.allOptions && request.allOptions.length ? request.allOptions : null;
      const choice = options ? options[this.rng.below(choiceLabel, options.length)] : request.default;
      if (kind === "decide") {
        if (get(d, "choice") !== choice || request.sealed) throw new Refused(`the stand-in's move for ${seat} is ${B.pyRepr(get(d, "choice"))}, but its policy (${version}) plays ${B.pyRepr(choice)} here`);
        this.standInMoves++;
        return;
      }
      const salt = B.hex(this.rng.block(saltLabel, 0));
      let expected;
      try { expected = makeCommitment(this.game, need(d, "round"), need(d, "step"), seat, choice, salt); } catch (e) {
        if (e instanceof Refused) throw new Malformed(e.message);
        throw e;
      }
      if (!request.sealed || get(d, "commitment") !== expected) throw new Refused(`the stand-in's commitment for ${seat} is not the one its policy (${version}) makes here`);
      this.standInMoves++;
    }
  }

  function cmpKey(a, b) { return a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] === b[1] ? 0 : a[1] < b[1] ? -1 : 1; }
  const allCommitted = (st) => st.waiting.every((p) => p in st.commits || st.defaulted.has(p));
  const owesCommit = (st) => st.waiting.filter((p) => !(p in st.commits) && !st.defaulted.has(p));
  const owesReveal = (st) => st.waiting.filter((p) => !st.revealed.has(p));
  function expect(d, key, value) {
    if (has(d, key) && !pyEq(d[key], value)) throw new Refused(`recorded ${key} ${quote(d[key])} differs from the rules' ${quote(value)}`);
    if (!has(d, key)) d[key] = value;
  }

  const S = Session.prototype;
  const HANDLERS = {
    created: S.created, key: S.key, client_seed: S.client_seed, started: S.started_, commit: S.commit, nmr: S.nmr,
    reveal: S.reveal, default: S.default_, decide: S.decide, reveal_held: S.reveal_held, sealed_batch: S.sealed_batch,
    disclosed: S.disclosed_, seed_revealed: S.seed_revealed, paused: S.paused_, resumed: S.resumed, extended: S.extended,
    replaced: S.replaced, stand_in_ended: S.stand_in_ended,
  };

  // the held reveals a log discloses (its `disclosed` event), as pbem/protocol/anonymous.py reads them
  function heldIn(rows) {
    const row = rows.find((r) => r.kind === "disclosed");
    if (!row) return null;
    const records = new Map(), steps = row.data && typeof row.data === "object" ? row.data.steps : null;
    for (const entry of Array.isArray(steps) ? steps : []) {
      if (entry && typeof entry === "object" && entry.reveals && typeof entry.reveals === "object" && !Array.isArray(entry.reveals)) {
        for (const [player, record] of Object.entries(entry.reveals)) records.set(JSON.stringify([get(entry, "round"), get(entry, "step"), player]), record);
      }
    }
    return { seq: row.seq, get: (r, s, p) => { const x = records.get(JSON.stringify([r, s, p])); return x && typeof x === "object" && !Array.isArray(x) ? Object.assign({}, x) : null; } };
  }

  // the seed the log reveals, when it is the one `created` committed to (pbem/store/audit.py _seed_in)
  function seedIn(rows) {
    const committed = rows.length && rows[0].data && typeof rows[0].data === "object" ? rows[0].data.seed_hash : null;
    const row = rows.find((r) => r.kind === "seed_revealed");
    if (!row || !row.data || typeof row.data !== "object") return null;
    let seed;
    try { seed = fromhex(row.data.seed); } catch (e) { return null; }
    return B.sha256Hex(seed) === committed ? seed : null;
  }

  // Replay an export's rows (objects with seq, kind, at, data) as `pbem audit` does.
  // {ok, seq, reason} (the first failure: "event N: reason" is the audit's line), or with
  // {unknownGame} when the rules of the log's game are not in this page. `afterEach(session,
  // seq)` runs after every event (the tests compare states).
  function run(rows, options = {}) {
    const game = rows.length ? rows[0].game : null;
    const seed = options.seed !== undefined ? options.seed : seedIn(rows);
    const session = new Session(game, seed, heldIn(rows));
    for (const row of rows) {
      try {
        // a copy: the replay fills in what an event may leave out (as the audit's setdefault)
        session.apply(row.kind, row.data !== null && typeof row.data === "object" && !Array.isArray(row.data) ? Object.assign({}, row.data) : row.data, row.at, row.seq);
      } catch (e) {
        if (e instanceof UnknownGame) return { ok: false, unknownGame: e.game, seq: row.seq, reason: e.message, session };
        if (!(e instanceof Refused)) throw e;
        const seq = e.seq || row.seq;
        return { ok: false, seq, reason: e.message, line: `event ${seq}: ${e.message}`, session };
      }
      if (options.afterEach) options.afterEach(session, row.seq);
    }
    const finished = session.finished;
    return { ok: true, session, full: session.state !== null, finished, seedRevealed: session.seedRevealed,
             result: finished ? session.rules.result(session.state) : null, standInMoves: session.standInMoves };
  }

  P.replay = { run, Session, Refused, seedIn, heldIn, pyEq };
})(globalThis.PBEM = globalThis.PBEM || {});

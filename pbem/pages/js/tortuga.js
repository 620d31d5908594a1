"use strict";
// Tortuga's rules (docs/rules.md), a second implementation written for the verifier page:
// the interface of pbem/games/base.py on plain JSON states equal to the Python game's
// to_json (so a state compares with JSON equality). Draws and their labels: protocol §4.
(function (P) {
  const B = P.base;
  const ACTIONS = ["fleet", "crew", "hunt", "board", "raid"];
  const FLEET = 0, CREW = 1, HUNT = 2, BOARD = 3, RAID = 4, SKULL = 5;
  const FACE_NAMES = [...ACTIONS, "skull"];
  const LETTERS = "ABCDE";
  const COLOURS = ["red", "blue", "yellow", "white", "purple"];
  const ABBREV = { r: "red", b: "blue", y: "yellow", w: "white", p: "purple" };
  const CAPACITY = [1, 1, 2, 2, 3, 3, 4, 4, 4]; // chests (and BOARD/RAID dice) by box 0..8
  const END_CHESTS = { standard: 6, long: 8 };
  const DICE_ROOM = 5;
  const CHEST_RANK = { purple: 0, white: 1, red: 2, blue: 3, yellow: 4 };
  const MAX_OPTIONS = 50;
  const KINDS = ["select", "skull", "bonus", "fleet", "crew", "hunt", "board", "raid", "order"];
  const SYNTAX = {
    select: "dice letters showing one action (skulls are wild), e.g. B,C; 'none' only if no die fits",
    skull: "skull:ACTION, e.g. skull:raid (ACTION: fleet, crew, hunt, board, raid)",
    bonus: "bonus:new:ACTION (a new tile on a free space) or bonus:flip:ACTION (turn a 1 to 2)",
    fleet: "fleet:go or fleet:forfeit", crew: "crew:go or crew:forfeit", hunt: "hunt:go or hunt:forfeit",
    board: "board:PLAYER:COLOUR (COLOUR as required), board:PLAYER, or board:forfeit",
    raid: "raid:PLAYER:COLOUR (COLOUR as required), raid:PLAYER, or raid:forfeit",
    order: "order:FLEET/CREW, chests left to right, e.g. order:red,blue/purple ('-' if empty)",
  };
  const quote = B.quote;

  // ------------------------------------------------------------------ refusals (§17 of the rules)
  const invalid = (msg, code) => Object.assign(new P.ChoiceError(msg, code || "syntax"), { invalid: true });
  const illegal = (msg, code) => Object.assign(new P.ChoiceError(msg, code || "not-allowed"), { illegal: true });
  const turn = (msg, code) => new P.ChoiceError(msg, code || "not-your-turn");

  // ------------------------------------------------------------------ Python's text handling
  const WS = "\t\n\u000b\u000c\r\u001c\u001d\u001e\u001f \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000";
  const WS_SET = new Set(WS);
  function strip(s) {
    let a = 0, b = s.length;
    while (a < b && WS_SET.has(s[a])) a++;
    while (b > a && WS_SET.has(s[b - 1])) b--;
    return s.slice(a, b);
  }
  const splitWs = (s) => s.split(new RegExp(`[${WS}]+`)).filter((t) => t.length);
  const lower = (s) => s.toLowerCase();
  const upper = (s) => s.toUpperCase();
  // docs/protocol.md §2, Names: NFKC, then case folding (Unicode's full folding: lower case,
  // and the few letters whose folding is not their lower case)
  const FOLD = { "ß": "ss", "ẞ": "ss", "ς": "σ", "ϐ": "β", "ϑ": "θ", "ϕ": "φ", "ϖ": "π", "ϰ": "κ", "ϱ": "ρ", "ϵ": "ε", "ᾳ": "αι", "ῃ": "ηι", "ῳ": "ωι" };
  const fold = (name) => name.normalize("NFKC").toLowerCase().replace(/[ßẞςϐϑϕϖϰϱϵᾳῃῳ]/g, (c) => FOLD[c]);
  const labelName = (name) => name.replace(/%/g, "%25").replace(/\//g, "%2F");
  const clone = (v) => (v === null || typeof v !== "object" ? v : Array.isArray(v) ? v.map(clone)
    : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clone(x)])));
  const clamp = (box) => (box < 1 ? 1 : box > 8 ? 8 : box);
  const capacity = (box) => (box <= 1 ? 1 : box <= 3 ? 2 : box <= 5 ? 3 : 4);
  const count = (list, x) => list.reduce((n, y) => n + (y === x), 0);
  const clockwise = (s) => s.players.map((_, k) => (s.start + k) % s.players.length);

  // ------------------------------------------------------------------ choices' syntax
  function formatDice(dice) {
    return dice.length ? [...dice].sort((a, b) => a - b).map((d) => LETTERS[d]).join(",") : "none";
  }
  function kindOf(text) {
    const head = lower(strip(strip(text).split(":")[0]));
    return KINDS.includes(head) && head !== "select" ? head : "select";
  }
  function parseDice(text) {
    const cleaned = upper(strip(text));
    if (cleaned === "NONE" || cleaned === "-" || cleaned === "") return [];
    let letters = splitWs(cleaned.replace(/,/g, " ").replace(/\+/g, " "));
    if (letters.length === 1 && Array.from(letters[0]).length > 1 && /^\p{L}+$/u.test(letters[0])) letters = Array.from(letters[0]);
    const dice = [];
    for (const token of letters) {
      if (Array.from(token).length !== 1 || !LETTERS.includes(token)) {
        throw invalid(`not understood: ${quote(strip(text))}; name dice by letter A-E, e.g. B,C (or 'none')`);
      }
      const index = LETTERS.indexOf(token);
      if (dice.includes(index)) throw invalid(`not understood: die ${token} is named twice in ${quote(strip(text))}`);
      dice.push(index);
    }
    return dice.sort((a, b) => a - b);
  }
  function parseAction(token, what) {
    const name = lower(strip(token));
    if (!ACTIONS.includes(name)) throw invalid(`not understood: ${what} ${quote(strip(token))}; use one of ${ACTIONS.join(", ")}`);
    return ACTIONS.indexOf(name);
  }
  function parseColour(token) {
    let name = lower(strip(token));
    name = ABBREV[name] || name;
    if (!COLOURS.includes(name)) throw invalid(`not understood: colour ${quote(strip(token))}; use one of ${COLOURS.join(", ")} (or r, b, y, w, p)`);
    return name;
  }
  function parseColourList(text) {
    text = strip(text);
    return text === "" || text === "-" ? [] : text.split(",").map(parseColour);
  }
  const formatOrder = (fleet, crew) => `order:${fleet.join(",") || "-"}/${crew.join(",") || "-"}`;
  function split(text, kind) {
    let parts = strip(text).split(":");
    if (parts.length && lower(strip(parts[0])) === kind) parts = parts.slice(1);
    return parts;
  }

  // ------------------------------------------------------------------ boards
  function room(b, action) {
    const limit = action === BOARD ? CAPACITY[b.boat] : action === RAID ? CAPACITY[b.pirate] : DICE_ROOM;
    const used = count(b.dice, action);
    return used < limit ? limit - used : 0;
  }
  const free = (b) => [0, 1, 2, 3, 4].filter((d) => b.dice[d] === null && !b.held.includes(d));
  const newBoard = () => ({ boat: 3, pirate: 3, tortuga: [], fleet: [], crew: [], island: [], tiles: [],
                            bonus: [0, 0, 0, 0, 0], dice: [null, null, null, null, null], roll: [null, null, null, null, null],
                            held: [], bonus_owed: 0 });

  // ------------------------------------------------------------------ legal choices
  function selectionAction(b, dice) {
    let action = SKULL;
    for (const d of dice) {
      const face = b.roll[d];
      if (face === SKULL) continue;
      if (action === SKULL) action = face;
      else if (face !== action) return null;
    }
    return action;
  }
  function selectionError(b, dice) {
    const action = selectionAction(b, dice);
    if (action === null) return ["mixed-actions", "the selected dice show different actions (only skulls may join another action)"];
    if (action === SKULL) return null;
    const r = room(b, action);
    if (dice.length > r) {
      const name = ACTIONS[action];
      if (action === BOARD || action === RAID) {
        const box = action === BOARD ? b.boat : b.pirate, token = action === BOARD ? "boat" : "pirate";
        return ["capacity", `${name} has room for ${r} more dice (${token} on box ${box} allows ${capacity(box)}), not ${dice.length}`];
      }
      return ["capacity", `${name} has room for ${r} more dice, not ${dice.length}`];
    }
    return null;
  }
  function anyFits(b) {
    for (let d = 0; d < 5; d++) {
      const face = b.roll[d];
      if (face === null || b.dice[d] !== null) continue;
      if (face === SKULL || room(b, face) > 0) return true;
    }
    return false;
  }
  function byFace(b) {
    const masks = [0, 0, 0, 0, 0, 0];
    for (let d = 0; d < 5; d++) if (b.roll[d] !== null && b.dice[d] === null) masks[b.roll[d]] |= 1 << d;
    return masks;
  }
  const diceOf = (mask) => [0, 1, 2, 3, 4].filter((d) => (mask >> d) & 1);
  function legalSelections(b) {
    const masks = byFace(b), skulls = masks[SKULL], found = [];
    for (let m = 1; m < 32; m++) if ((m & skulls) === m) found.push(m);
    for (let action = 0; action < 5; action++) {
      const own = masks[action];
      if (!own) continue;
      const r = room(b, action);
      for (let m = 1; m < 32; m++) if ((m & (own | skulls)) === m && (m & own) && diceOf(m).length <= r) found.push(m);
    }
    const key = (m) => { const d = diceOf(m); return [d.length, ...d]; };
    found.sort((x, y) => { const a = key(x), c = key(y); for (let i = 0; i < a.length; i++) if (a[i] !== c[i]) return a[i] - c[i]; return 0; });
    return found.map(diceOf);
  }
  function selectOptions(b) {
    const legal = legalSelections(b);
    return legal.length ? legal.map(formatDice) : ["none"];
  }
  function defaultSelect(s, seat) {
    const b = s.boards[seat], masks = byFace(b);
    let text = null, best = 0;
    for (let action = 0; action < 5; action++) {
      const own = masks[action];
      if (!own) continue;
      const r = room(b, action);
      if (!r) continue;
      const ranked = diceOf(own).sort((x, y) => (s.faces[y][action] - s.faces[x][action]) || x - y);
      const chosen = ranked.slice(0, r), total = chosen.reduce((n, d) => n + s.faces[d][action], 0);
      if (total > best) { text = formatDice(chosen); best = total; }
    }
    if (text === null) {
      const skulls = masks[SKULL];
      return formatDice(skulls ? [diceOf(skulls)[0]] : []);
    }
    return text;
  }
  function skullOptions(s, seat) {
    const b = s.boards[seat], k = b.held.length;
    return ACTIONS.filter((_, a) => room(b, a) >= k).map((name) => `skull:${name}`);
  }
  function bonusOptions(s, seat) {
    const bonus = s.boards[seat].bonus;
    const fresh = s.bonus_supply > 0 ? ACTIONS.filter((_, a) => bonus[a] === 0).map((n) => `bonus:new:${n}`) : [];
    return [...fresh, ...ACTIONS.filter((_, a) => bonus[a] === 1).map((n) => `bonus:flip:${n}`)];
  }
  const sortedColours = (area) => COLOURS.filter((c) => area.includes(c));
  function targetOptions(s, seat, action, position) {
    const name = ACTIONS[action], excluded = new Set([seat]);
    if (position === 2 && name in s.targets) excluded.add(s.targets[name]);
    const options = [`${name}:forfeit`];
    for (let other = 0; other < s.players.length; other++) {
      if (excluded.has(other)) continue;
      const player = s.players[other];
      const colours = position === 1 ? sortedColours(action === BOARD ? s.boards[other].fleet : s.boards[other].crew) : sortedColours(s.centre);
      if (colours.length) for (const c of colours) options.push(`${name}:${player}:${c}`);
      else options.push(`${name}:${player}`);
    }
    return options;
  }
  function orderLimits(s, seat) {
    const b = s.boards[seat];
    return [Math.min(capacity(b.boat), b.crew.length), Math.min(capacity(b.pirate), b.island.length)];
  }
  function arrangements(chests, k, cap) {
    const counts = {};
    for (const c of COLOURS) if (chests.includes(c)) counts[c] = count(chests, c);
    const out = [];
    (function walk(prefix) {
      if (out.length > cap) return;
      if (prefix.length === k) { out.push(prefix.slice()); return; }
      for (const c of COLOURS) {
        if (counts[c]) { counts[c]--; prefix.push(c); walk(prefix); prefix.pop(); counts[c]++; }
      }
    })([]);
    return out;
  }
  function singleOrder(s, seat) {
    const b = s.boards[seat], [kf, kc] = orderLimits(s, seat);
    return (kf === 0 || new Set(b.crew).size === 1) && (kc === 0 || new Set(b.island).size === 1);
  }
  function orderOptions(s, seat, cap = 50) {
    const b = s.boards[seat], [kf, kc] = orderLimits(s, seat);
    const fleets = arrangements(b.crew, kf, cap), crews = arrangements(b.island, kc, cap);
    if (fleets.length * crews.length > cap) return null;
    const out = [];
    for (const f of fleets) for (const c of crews) out.push(formatOrder(f, c));
    return out;
  }
  const byRank = (list) => list.map((c, i) => [c, i]).sort((x, y) => (CHEST_RANK[x[0]] - CHEST_RANK[y[0]]) || x[1] - y[1]).map((x) => x[0]);
  function defaultOrder(s, seat) {
    const b = s.boards[seat], [kf, kc] = orderLimits(s, seat);
    return formatOrder(byRank(b.crew).slice(0, kf), byRank(b.island).slice(0, kc));
  }
  function defaultBonus(s, seat) { const o = bonusOptions(s, seat); return o.length ? o[0] : ""; }

  // ------------------------------------------------------------------ open requests
  const WANTED = { fch: [] };
  for (const a of [FLEET, CREW, HUNT]) for (const pos of [1, 2]) WANTED.fch.push([a, pos, `${ACTIONS[a]}:${pos}`, ACTIONS[a]]);
  for (const a of [BOARD, RAID]) for (const pos of [1, 2]) WANTED[`${ACTIONS[a]}${pos}`] = [[a, pos, `${ACTIONS[a]}:${pos}`, ACTIONS[a]]];
  function stageRequests(s) {
    const out = [];
    for (const [action, pos, key, kind] of WANTED[s.stage]) {
      const seat = s.positions[action][pos - 1];
      if (seat !== null && !(key in s.decisions)) out.push([seat, kind, key]);
    }
    return out;
  }
  function openRequests(s) {
    if (s.phase === "roll") {
      const order = clockwise(s), out = [];
      if (s.rolling.length) {
        for (const seat of order) if (s.rolling.includes(seat) && !(String(seat) in s.sealed)) out.push([seat, "select", true]);
      } else if (s.skull_queue.length) out.push([s.skull_queue[0], "skull", false]);
      for (const seat of s.open_select) out.push([seat, "select", false]);
      for (const seat of order) if (s.boards[seat].bonus_owed) out.push([seat, "bonus", false]);
      return out;
    }
    if (s.phase === "actions") return stageRequests(s).map(([seat, kind]) => [seat, kind, false]);
    if (s.phase === "move") return clockwise(s).filter((seat) => !(String(seat) in s.orders)).map((seat) => [seat, "order", false]);
    return [];
  }
  function owedBy(s, seat) {
    const owed = new Map();
    if (s.phase === "roll") {
      if (s.rolling.length && s.rolling.includes(seat) && !(String(seat) in s.sealed)) owed.set("select", true);
      else if (!s.rolling.length && s.skull_queue.length && s.skull_queue[0] === seat) owed.set("skull", false);
      if (s.open_select.includes(seat)) owed.set("select", false);
      if (s.boards[seat].bonus_owed) owed.set("bonus", false);
    } else if (s.phase === "actions") {
      for (const [other, kind] of stageRequests(s)) if (other === seat) owed.set(kind, false);
    } else if (s.phase === "move" && !(String(seat) in s.orders)) owed.set("order", false);
    return owed;
  }
  const position = (s, seat, action) => (s.positions[action][0] === seat ? 1 : 2);
  function optionsFor(s, seat, kind) {
    if (kind === "select") {
      const opts = selectOptions(s.boards[seat]);
      const some = opts.filter((o) => o !== "none");
      return some.length ? some : opts;
    }
    if (kind === "skull") return skullOptions(s, seat);
    if (kind === "bonus") return bonusOptions(s, seat);
    if (kind === "order") return orderOptions(s, seat);
    const action = ACTIONS.indexOf(kind);
    if (action <= HUNT) return [`${kind}:go`, `${kind}:forfeit`];
    return targetOptions(s, seat, action, position(s, seat, action));
  }
  function defaultFor(s, seat, kind) {
    if (kind === "select") return anyFits(s.boards[seat]) ? defaultSelect(s, seat) : "none";
    if (kind === "skull") return skullOptions(s, seat)[0];
    if (kind === "bonus") return defaultBonus(s, seat);
    if (kind === "order") return defaultOrder(s, seat);
    return `${kind}:forfeit`;
  }

  // ------------------------------------------------------------------ parsing against a state
  function parseSelect(s, seat, text) {
    const dice = parseDice(text), b = s.boards[seat];
    let problem = null;
    for (const d of dice) {
      if (b.dice[d] !== null) problem = ["die-placed", `die ${LETTERS[d]} is already on ${ACTIONS[b.dice[d]]}`];
      else if (b.roll[d] === null) problem = ["die-not-rolled", `die ${LETTERS[d]} was not rolled in this step`];
      if (problem) break;
    }
    if (!problem && dice.length) problem = selectionError(b, dice);
    if (!problem && !dice.length && anyFits(b)) problem = ["must-select", "at least one die fits, so a selection is required"];
    if (problem) {
      const opts = optionsFor(s, seat, "select");
      throw illegal(`illegal: ${formatDice(dice)}: ${problem[1]}; legal: ${opts.join(", ")}`, problem[0]);
    }
    return dice;
  }
  function parseSkull(s, seat, text) {
    const parts = split(text, "skull");
    if (parts.length !== 1) throw invalid(`not understood: ${quote(strip(text))}; ${SYNTAX.skull}`);
    return parseAction(parts[0], "action");
  }
  function parseBonus(s, seat, text) {
    const parts = split(text, "bonus");
    if (parts.length !== 2 || !["new", "flip"].includes(lower(strip(parts[0])))) throw invalid(`not understood: ${quote(strip(text))}; ${SYNTAX.bonus}`);
    return [lower(strip(parts[0])), parseAction(parts[1], "action")];
  }
  function parseGo(s, seat, text) {
    const kind = kindOf(text), parts = split(text, kind);
    const word = parts.length === 1 ? lower(strip(parts[0])) : "";
    if (word !== "go" && word !== "forfeit") throw invalid(`not understood: ${quote(strip(text))}; ${SYNTAX[kind]}`);
    return word;
  }
  function parseTarget(s, seat, text) {
    const kind = kindOf(text), parts = split(text, kind);
    if (parts.length === 1 && fold(strip(parts[0])) === "forfeit") return null;
    if ((parts.length !== 1 && parts.length !== 2) || !strip(parts[0])) throw invalid(`not understood: ${quote(strip(text))}; ${SYNTAX[kind]}`);
    const wanted = fold(strip(parts[0]));
    const match = s.players.findIndex((p) => fold(p) === wanted);
    if (match < 0) throw invalid(`not understood: no player ${quote(strip(parts[0]))}; players: ${s.players.join(", ")}`, "unknown-player");
    return [match, parts.length === 2 ? parseColour(parts[1]) : null];
  }
  function parseOrder(s, seat, text) {
    const parts = split(text, "order");
    if (parts.length !== 1 || count(Array.from(parts[0]), "/") !== 1) throw invalid(`not understood: ${quote(strip(text))}; ${SYNTAX.order}`);
    const [fleet, crew] = parts[0].split("/");
    return [parseColourList(fleet), parseColourList(crew)];
  }
  function checkOrder(s, seat, [fleet, crew]) {
    const b = s.boards[seat], [kf, kc] = orderLimits(s, seat);
    for (const [listed, source, k, area, src] of [[fleet, b.crew, kf, "fleet", "crew"], [crew, b.island, kc, "crew", "island"]]) {
      if (listed.length !== k) {
        throw illegal(`illegal: the ${area} area takes ${k} chest(s) from your ${src} area (${source.join(", ") || "empty"}), you listed ${listed.length}; e.g. ${defaultOrder(s, seat)}`, "order-count");
      }
      for (const colour of new Set(listed)) {
        if (count(listed, colour) > count(source, colour)) {
          throw illegal(`illegal: your ${src} area has ${count(source, colour)} ${colour} chest(s), you listed ${count(listed, colour)}; e.g. ${defaultOrder(s, seat)}`, "order-chests");
        }
      }
    }
  }
  const PARSERS = { select: parseSelect, skull: parseSkull, bonus: parseBonus, fleet: parseGo, crew: parseGo, hunt: parseGo,
                    board: parseTarget, raid: parseTarget, order: parseOrder };
  function canonTarget(s, p, kind) {
    return p === null ? `${kind}:forfeit` : `${kind}:${s.players[p[0]]}` + (p[1] ? `:${p[1]}` : "");
  }
  const CANON = {
    select: (s, p) => formatDice(p), skull: (s, p) => `skull:${ACTIONS[p]}`, bonus: (s, p) => `bonus:${p[0]}:${ACTIONS[p[1]]}`,
    fleet: (s, p) => `fleet:${p}`, crew: (s, p) => `crew:${p}`, hunt: (s, p) => `hunt:${p}`,
    board: (s, p) => canonTarget(s, p, "board"), raid: (s, p) => canonTarget(s, p, "raid"), order: (s, p) => formatOrder(p[0], p[1]),
  };
  function plainlyLegal(s, seat, kind, parsed) {
    if (kind === "fleet" || kind === "crew" || kind === "hunt") return true;
    const b = s.boards[seat];
    if (kind === "skull") return room(b, parsed) >= b.held.length;
    if (kind === "bonus") {
      const [how, action] = parsed;
      return how === "new" ? b.bonus[action] === 0 && s.bonus_supply > 0 : b.bonus[action] === 1;
    }
    if (kind === "board" || kind === "raid") {
      if (parsed === null) return true;
      const [target, colour] = parsed;
      if (target === seat) return false;
      let area;
      if (position(s, seat, ACTIONS.indexOf(kind)) === 1) area = kind === "board" ? s.boards[target].fleet : s.boards[target].crew;
      else if ((kind in s.targets ? s.targets[kind] : seat) === target) return false;
      else area = s.centre;
      return area.length ? area.includes(colour) : colour === null;
    }
    return false;
  }

  // (seat, kind, canonical, parsed), or a ChoiceError (pbem/games/tortuga/engine.py validate)
  function validate(s, player, text) {
    const seat = s.players.indexOf(player);
    if (seat < 0) throw turn(`${quote(player)} is not a player in this game (${s.players.join(", ")})`, "not-a-player");
    if (typeof text !== "string" || !strip(text)) throw invalid("empty choice; send the choice text, e.g. B,C or fleet:go");
    const owed = owedBy(s, seat), kind = kindOf(text);
    if (kind === "select" && !owed.has(kind) && owed.size) {
      try { parseDice(text); } catch (e) {
        if (!e.invalid) throw e;
        const hints = [...owed.keys()].map((k) => `${k}: ${SYNTAX[k]}`).join("; ");
        throw invalid(`not understood: ${quote(strip(text))}; ${player} owes ${hints}`);
      }
    }
    if (!owed.has(kind)) {
      if (owed.size) throw turn(`${player} owes no ${kind} choice now; open for ${player}: ${[...owed.keys()].join(", ")}`);
      const waiting = openRequests(s).map(([o, k]) => `${s.players[o]} (${k})`).join(", ");
      throw turn(`${player} owes no choice now; waiting for ${waiting || "nobody: the game is over"}`);
    }
    let parsed;
    try { parsed = PARSERS[kind](s, seat, text); } catch (e) {
      if (!e.invalid) throw e;
      const options = optionsFor(s, seat, kind);
      const hint = options !== null ? `legal: ${options.join(", ")}` : `e.g. ${defaultFor(s, seat, kind)}`;
      throw invalid(`${e.message}; ${hint}`, e.code);
    }
    const canonical = CANON[kind](s, parsed);
    if (kind === "select" || plainlyLegal(s, seat, kind, parsed)) return [seat, kind, canonical, parsed];
    if (kind === "order") {
      try { checkOrder(s, seat, parsed); } catch (e) {
        const options = optionsFor(s, seat, kind);
        if (options === null || !e.illegal) throw e;
        throw illegal(`${e.message}; legal: ${options.join(", ")}`, e.code);
      }
      return [seat, kind, canonical, parsed];
    }
    const options = optionsFor(s, seat, kind);
    if (options !== null && !options.includes(canonical)) throw illegal(`illegal: ${canonical} is not allowed now; legal: ${options.join(", ")}`);
    return [seat, kind, canonical, parsed];
  }

  // ------------------------------------------------------------------ draws and deposits
  function drawFrom(counts, items, rng, label) {
    const total = counts.reduce((a, b) => a + b, 0);
    if (!total) return null;
    let k = rng.below(label, total);
    for (let i = 0; i < counts.length; i++) {
      if (k < counts[i]) { counts[i]--; return items[i]; }
      k -= counts[i];
    }
    throw new Error("unreachable");
  }
  const drawChest = (s, rng, label) => drawFrom(s.bag, COLOURS, rng, label);
  const drawTile = (s, rng, label) => drawFrom(s.pool, [1, 2, 3], rng, label);
  function deposit(s, seat, area, chests) {
    if (!chests.length) return;
    const toCentre = [], toBag = [];
    for (const colour of chests) {
      if (s.players.length > 2 && !s.centre.includes(colour)) { s.centre.push(colour); toCentre.push(colour); }
      else { s.bag[COLOURS.indexOf(colour)]++; toBag.push(colour); }
    }
    s.effects.push({ type: "deposit", player: s.players[seat], area, chests, to_centre: toCentre, to_bag: toBag });
  }

  // ------------------------------------------------------------------ phase 1: rolling
  const rollText = (b) => Object.fromEntries([0, 1, 2, 3, 4].filter((d) => b.roll[d] !== null).map((d) => [LETTERS[d], FACE_NAMES[b.roll[d]]]));
  function openStep(s, rng) {
    s.step++;
    const rolling = [];
    s.boards.forEach((b, seat) => {
      const f = free(b);
      if (!f.length) return;
      rolling.push(seat);
      const label = `r${s.round}/roll${s.step}/${labelName(s.players[seat])}/`;
      for (const d of f) b.roll[d] = rng.below(label + LETTERS[d], 6);
    });
    s.rolling = rolling;
    s.sealed = {};
    s.effects.push({ type: "step", round: s.round, step: s.step, players: rolling.map((i) => s.players[i]) });
  }
  function placeSelection(s, seat, b, dice) {
    const action = selectionAction(b, dice), text = formatDice(dice);
    if (action === SKULL) {
      b.held = dice.slice();
      const order = clockwise(s);
      s.skull_queue.push(seat);
      s.skull_queue.sort((x, y) => order.indexOf(x) - order.indexOf(y));
      s.effects.push({ type: "held", player: s.players[seat], dice: text });
    } else {
      for (const d of dice) b.dice[d] = action;
      s.effects.push({ type: "assign", player: s.players[seat], dice: text, action: ACTIONS[action], how: "select" });
    }
  }
  function forcedReroll(s, seat, b, rng) {
    for (let attempt = 1; attempt < 10000; attempt++) {
      const label = `r${s.round}/roll${s.step}/${labelName(s.players[seat])}/reroll${attempt}/`;
      for (const d of free(b)) b.roll[d] = rng.below(label + LETTERS[d], 6);
      const fits = anyFits(b);
      s.effects.push({ type: "reroll", player: s.players[seat], attempt, roll: rollText(b), fits });
      if (fits) { s.open_select.push(seat); return; }
    }
    throw new Error("forced reroll did not end");
  }
  function resolveStep(s, rng) {
    const rolled = s.rolling;
    for (const seat of clockwise(s)) {
      if (!rolled.includes(seat)) continue;
      const b = s.boards[seat], dice = parseDice(s.sealed[String(seat)]), text = formatDice(dice);
      s.effects.push({ type: "reveal", player: s.players[seat], roll: rollText(b), selected: text });
      if (dice.length) { placeSelection(s, seat, b, dice); b.roll = [null, null, null, null, null]; }
      else forcedReroll(s, seat, b, rng);
    }
    for (const seat of clockwise(s)) {
      if (!rolled.includes(seat) && !free(s.boards[seat]).length) {
        s.boards[seat].bonus_owed++;
        s.effects.push({ type: "bonus_award", player: s.players[seat] });
        settleBonus(s, seat);
      }
    }
    s.rolling = [];
    s.sealed = {};
  }
  function takeBonus(s, seat, how, action) {
    const b = s.boards[seat];
    if (how === "new") { b.bonus[action] = 1; s.bonus_supply--; } else b.bonus[action] = 2;
    b.bonus_owed--;
    s.effects.push({ type: "bonus", player: s.players[seat], how, action: ACTIONS[action] });
  }
  function settleBonus(s, seat) {
    while (s.boards[seat].bonus_owed) {
      const options = bonusOptions(s, seat);
      if (options.length > 1) return;
      if (!options.length) {
        s.boards[seat].bonus_owed--;
        s.effects.push({ type: "bonus_none", player: s.players[seat] });
        continue;
      }
      const [, how, action] = options[0].split(":");
      takeBonus(s, seat, how, ACTIONS.indexOf(action));
    }
  }

  // ------------------------------------------------------------------ phase 2: actions
  function enterActions(s) {
    s.phase = "actions"; s.stage = "fch"; s.decisions = {}; s.targets = {};
    const n = s.players.length, order = clockwise(s);
    const totals = ACTIONS.map(() => new Array(n).fill(null));
    s.boards.forEach((b, seat) => {
      b.dice.forEach((action, d) => { if (action !== null) totals[action][seat] = (totals[action][seat] || 0) + s.faces[d][action]; });
      for (let a = 0; a < 5; a++) if (totals[a][seat] !== null) totals[a][seat] += b.bonus[a];
    });
    const positions = [];
    for (let a = 0; a < 5; a++) {
      const row = totals[a];
      const ranked = order.filter((seat) => row[seat] !== null).map((seat, i) => [seat, i])
        .sort((x, y) => (row[y[0]] - row[x[0]]) || x[1] - y[1]).map((x) => x[0]);
      const first = ranked.length ? ranked[0] : null, second = ranked.length > 1 && n > 2 ? ranked[1] : null;
      positions.push([first, second]);
      const shown = {};
      row.forEach((t, i) => { if (t !== null) shown[s.players[i]] = t; });
      s.effects.push({ type: "totals", action: ACTIONS[a], totals: shown,
                       first: first !== null ? s.players[first] : null, second: second !== null ? s.players[second] : null });
    }
    s.totals = totals;
    s.positions = positions;
  }
  const STAGES = ["fch", "board1", "board2", "raid1", "raid2"];
  function finishStage(s, rng) {
    if (s.stage === "fch") {
      for (const action of [FLEET, CREW, HUNT]) {
        for (const pos of [1, 2]) {
          const seat = s.positions[action][pos - 1];
          if (seat !== null) resolveFch(s, seat, action, pos, s.decisions[`${ACTIONS[action]}:${pos}`], rng);
        }
      }
    } else {
      const action = s.stage.startsWith("board") ? BOARD : RAID, pos = Number(s.stage.slice(-1));
      const seat = s.positions[action][pos - 1];
      if (seat !== null) resolveAttack(s, seat, action, pos, s.decisions[`${ACTIONS[action]}:${pos}`]);
    }
    const index = STAGES.indexOf(s.stage) + 1;
    if (index < STAGES.length) { s.stage = STAGES[index]; return; }
    surplus(s);
    enterMove(s, rng);
  }
  function forfeit(s, seat, action, pos) {
    s.effects.push({ type: "forfeit", player: s.players[seat], action: ACTIONS[action], position: pos });
  }
  function resolveFch(s, seat, action, pos, choice, rng) {
    if (choice.endsWith(":forfeit")) return forfeit(s, seat, action, pos);
    const b = s.boards[seat], name = s.players[seat];
    if (action === FLEET || action === CREW) {
      const steps = pos === 2 || s.players.length === 2 ? 1 : 2, attr = action === FLEET ? "boat" : "pirate";
      const before = b[attr];
      b[attr] = clamp(before + steps);
      s.effects.push({ type: "advance", player: name, action: ACTIONS[action], position: pos, from: before, to: b[attr] });
      return;
    }
    const label = `r${s.round}/hunt/${pos}`;
    let chest = null;
    if (pos === 1) {
      chest = drawChest(s, rng, `${label}/chest`);
      if (chest) b.island.push(chest);
    }
    const draws = pos === 1 && s.players.length > 2 ? 2 : 1, drawn = [];
    for (let k = 1; k <= draws; k++) { const t = drawTile(s, rng, `${label}/tile${k}`); if (t) drawn.push(t); }
    const kept = drawn.length ? Math.max(...drawn) : null;
    if (kept !== null) { b.tiles.push(kept); drawn.splice(drawn.indexOf(kept), 1); }
    for (const value of drawn) s.pool[value - 1]++;
    s.effects.push({ type: "hunt", player: name, position: pos, chest, tiles_drawn: drawn.length + (kept !== null ? 1 : 0),
                     tile_kept: kept !== null, secret: { player: name, kept, returned: drawn } });
  }
  function resolveAttack(s, seat, action, pos, choice) {
    if (choice.endsWith(":forfeit")) return forfeit(s, seat, action, pos);
    const kind = ACTIONS[action], parts = choice.split(":");
    const target = s.players.indexOf(parts[1]), colour = parts.length === 3 ? parts[2] : null;
    const actor = s.boards[seat], victim = s.boards[target], attr = action === BOARD ? "boat" : "pirate";
    if (pos === 1) {
      s.targets[kind] = target;
      if (colour) {
        const area = action === BOARD ? victim.fleet : victim.crew;
        area.splice(area.lastIndexOf(colour), 1);
        actor.island.push(colour);
      }
    } else if (colour) {
      s.centre.splice(s.centre.indexOf(colour), 1);
      actor.island.push(colour);
    }
    const before = victim[attr];
    victim[attr] = clamp(before - 1);
    const defended = count(victim.dice, action) > 0, actorBefore = actor[attr];
    if (defended) actor[attr] = clamp(actorBefore - 1);
    s.effects.push({ type: "attack", action: kind, player: s.players[seat], position: pos, target: s.players[target],
                     chest: colour, from_centre: pos === 2, target_box: [before, victim[attr]], defended,
                     actor_box: [actorBefore, actor[attr]] });
  }
  function surplus(s) {
    for (const seat of clockwise(s)) {
      const b = s.boards[seat];
      for (const [area, box] of [["fleet", b.boat], ["crew", b.pirate]]) {
        const cap = capacity(box);
        if (b[area].length > cap) {
          const extra = b[area].slice(cap);
          b[area] = b[area].slice(0, cap);
          deposit(s, seat, area, extra);
        }
      }
    }
  }

  // ------------------------------------------------------------------ phase 3: moving
  function enterMove(s, rng) {
    s.phase = "move"; s.stage = ""; s.orders = {};
    for (const seat of clockwise(s)) {
      const chest = drawChest(s, rng, `r${s.round}/move/${labelName(s.players[seat])}`);
      if (chest) s.boards[seat].island.push(chest);
      s.effects.push({ type: "draw", player: s.players[seat], chest });
    }
    for (const seat of clockwise(s)) if (singleOrder(s, seat)) s.orders[String(seat)] = defaultOrder(s, seat);
  }
  function moveChests(s) {
    for (const seat of clockwise(s)) {
      const b = s.boards[seat], [fleet, crew] = parseOrder(s, seat, s.orders[String(seat)]);
      const toTortuga = b.fleet;
      b.tortuga.push(...toTortuga);
      const leftCrew = b.crew.slice(), leftIsland = b.island.slice();
      for (const c of fleet) leftCrew.splice(leftCrew.indexOf(c), 1);
      for (const c of crew) leftIsland.splice(leftIsland.indexOf(c), 1);
      b.fleet = fleet.slice(); b.crew = crew.slice(); b.island = [];
      s.effects.push({ type: "move", player: s.players[seat], to_tortuga: toTortuga, fleet: b.fleet.slice(), crew: b.crew.slice(),
                       order: s.orders[String(seat)] });
      deposit(s, seat, "fleet", leftCrew);
      deposit(s, seat, "crew", leftIsland);
    }
    if (s.boards.some((b) => b.tortuga.length >= END_CHESTS[s.variant])) {
      s.phase = "over"; s.orders = {};
      s.effects.push({ type: "game_over", round: s.round });
      return;
    }
    s.start = (s.start + 1) % s.players.length;
    s.round++;
    s.phase = "roll"; s.step = 0; s.orders = {};
    s.positions = []; s.totals = []; s.decisions = {}; s.targets = {};
    for (const b of s.boards) { b.dice = [null, null, null, null, null]; b.roll = [null, null, null, null, null]; b.held = []; }
    s.effects.push({ type: "round", round: s.round, start_player: s.players[s.start] });
  }

  function advance(s, rng) {
    for (;;) {
      if (s.phase === "roll") {
        if (s.rolling.length || s.skull_queue.length || s.open_select.length) return;
        if (s.boards.some((b) => b.bonus_owed)) return;
        if (s.boards.some((b) => free(b).length)) { openStep(s, rng); return; }
        enterActions(s);
      } else if (s.phase === "actions") {
        if (stageRequests(s).length) return;
        finishStage(s, rng);
      } else if (s.phase === "move") {
        if (Object.keys(s.orders).length < s.players.length) return;
        moveChests(s);
      } else return;
    }
  }

  // ------------------------------------------------------------------ the interface
  const DEFAULT_FACES = [0, 1, 2, 3, 4].map((i) => [0, 1, 2, 3, 4].map((j) => ((i + j) % 5) + 1));
  function checkPlayers(players) {
    players = B.pyIter(players);
    if (players.length < 2 || players.length > 4) throw new Error(`Tortuga takes 2 to 4 players, got ${players.length}`);
    const seen = new Set();
    for (const name of players) {
      if (typeof name !== "string" || !name || name !== strip(name)) throw new Error(`player name ${quote(name)} must be non-empty without surrounding spaces`);
      if (Array.from(name).length > 40) throw new Error(`player name ${quote(name, 20)} is longer than 40 characters`);
      if (name.normalize("NFC") !== name) throw new Error(`player name ${quote(name)} is not in composed form`);
      if (/[,:]/.test(name)) throw new Error(`player name ${quote(name)} may not contain , or : (used by the choice syntax)`);
      const key = fold(name);
      if (["forfeit", "none", "go"].includes(key)) throw new Error(`player name ${quote(name)} is reserved by the choice syntax; choose another`);
      if (seen.has(key)) throw new Error(`player name ${quote(name)} is given twice`);
      seen.add(key);
    }
    return players.slice();
  }
  function setup(players, options, rng) {
    options = B.pyDict(options);
    players = checkPlayers(players);
    const variant = options.variant === undefined ? "standard" : options.variant;
    if (!(variant in END_CHESTS)) throw new Error(`unknown variant ${quote(variant)}; use standard or long`);
    const startName = options.start || players[0];
    if (!players.includes(startName)) throw new Error(`start player ${quote(startName)} is not one of ${players.join(", ")}`);
    const faces = options.faces || DEFAULT_FACES;
    if (faces.length !== 5 || faces.some((row) => [...row].sort().join() !== "1,2,3,4,5")) throw new Error("face table: each of the dice A-E shows the values 1 to 5 once each");
    const s = { game: "tortuga", players: players.slice(), variant, faces: clone(faces), start: players.indexOf(startName),
                round: 1, phase: "roll", step: 0, stage: "", bag: [10, 10, 10, 5, 5], pool: [17, 9, 4], bonus_supply: 20,
                centre: [], boards: players.map(newBoard), rolling: [], sealed: {}, skull_queue: [], open_select: [],
                positions: [], totals: [], decisions: {}, targets: {}, orders: {}, effects: [] };
    for (const seat of clockwise(s)) {
      const name = players[seat];
      const first = drawChest(s, rng, `setup/${labelName(name)}/chest1`);
      const second = drawChest(s, rng, `setup/${labelName(name)}/chest2`);
      s.boards[seat].island.push(first);
      s.boards[seat].crew.push(second);
      s.effects.push({ type: "setup", player: name, island: first, crew: second });
    }
    s.effects.push({ type: "round", round: 1, start_player: startName });
    advance(s, rng);
    return s;
  }
  function pending(s) {
    return openRequests(s).map(([seat, kind, sealed]) => {
      const every = optionsFor(s, seat, kind);
      const options = every !== null && every.length > MAX_OPTIONS ? null : every;
      return { player: s.players[seat], kind, sealed, round: s.round, step: s.step, default: defaultFor(s, seat, kind),
               syntax: SYNTAX[kind], options, anonymous: false, allOptions: options === null ? every : null };
    });
  }
  const check = (s, player, text) => validate(s, player, text)[2];
  function apply(state, player, text, rng) {
    const [seat, kind, canonical, parsed] = validate(state, player, text);
    const s = copyState(state);
    if (kind === "select") {
      if (s.open_select.includes(seat)) {
        s.open_select.splice(s.open_select.indexOf(seat), 1);
        const b = s.boards[seat];
        placeSelection(s, seat, b, parsed);
        b.roll = [null, null, null, null, null];
      } else {
        s.sealed[String(seat)] = canonical;
        if (Object.keys(s.sealed).length < s.rolling.length) return s;
        resolveStep(s, rng);
      }
    } else if (kind === "skull") {
      s.skull_queue.shift();
      const b = s.boards[seat], dice = b.held;
      for (const d of dice) b.dice[d] = parsed;
      s.effects.push({ type: "assign", player: s.players[seat], dice: formatDice(dice), action: ACTIONS[parsed], how: "skull" });
      b.held = [];
    } else if (kind === "bonus") {
      takeBonus(s, seat, parsed[0], parsed[1]);
      for (const other of clockwise(s)) settleBonus(s, other);
    } else if (kind === "order") {
      s.orders[String(seat)] = canonical;
    } else {
      s.decisions[`${kind}:${position(s, seat, ACTIONS.indexOf(kind))}`] = canonical;
    }
    advance(s, rng);
    return s;
  }
  // a copy to change, as apply needs it: what the rules change in place is copied (the
  // effects start afresh); what they only ever replace or never change is shared
  function copyState(s) {
    const c = Object.assign({}, s);
    c.bag = s.bag.slice(); c.pool = s.pool.slice(); c.centre = s.centre.slice();
    c.boards = s.boards.map((b) => ({ boat: b.boat, pirate: b.pirate, tortuga: b.tortuga.slice(), fleet: b.fleet.slice(),
                                      crew: b.crew.slice(), island: b.island.slice(), tiles: b.tiles.slice(), bonus: b.bonus.slice(),
                                      dice: b.dice.slice(), roll: b.roll.slice(), held: b.held.slice(), bonus_owed: b.bonus_owed }));
    c.rolling = s.rolling.slice(); c.sealed = Object.assign({}, s.sealed);
    c.skull_queue = s.skull_queue.slice(); c.open_select = s.open_select.slice();
    c.decisions = Object.assign({}, s.decisions); c.targets = Object.assign({}, s.targets); c.orders = Object.assign({}, s.orders);
    c.effects = [];
    return c;
  }
  const defaultChoice = (s, player, kind) => defaultFor(s, s.players.indexOf(player), kind);

  function boardView(s, seat, viewer) {
    const b = s.boards[seat], own = viewer === s.players[seat];
    const showsRoll = own || (!s.rolling.includes(seat) && s.open_select.includes(seat));
    const view = { boat: b.boat, pirate: b.pirate, tortuga: b.tortuga.slice(), fleet: b.fleet.slice(), crew: b.crew.slice(),
                   island: b.island.slice(), bonus: Object.fromEntries(ACTIONS.map((a, i) => [a, b.bonus[i]]).filter((x) => x[1])),
                   dice: Object.fromEntries(b.dice.map((a, d) => [LETTERS[d], a !== null ? ACTIONS[a] : null])),
                   held: b.held.map((d) => LETTERS[d]), tiles: b.tiles.length, bonus_owed: b.bonus_owed };
    if (showsRoll) view.roll = Object.fromEntries(b.roll.map((f, d) => [LETTERS[d], f]).filter((x) => x[1] !== null).map(([l, f]) => [l, FACE_NAMES[f]]));
    if (own) {
      view.tile_values = b.tiles.slice().sort((x, y) => y - x);
      if (String(seat) in s.sealed) view.revealed = s.sealed[String(seat)];
    }
    return view;
  }
  function view(s, viewer) {
    viewer = viewer === undefined ? null : viewer;
    const name = (seat) => (seat !== null ? s.players[seat] : null);
    const effects = s.effects.map((e) => {
      const shown = {};
      for (const [k, v] of Object.entries(e)) if (k !== "secret") shown[k] = clone(v);
      if ("secret" in e && viewer !== null && e.secret.player === viewer) shown.secret = clone(e.secret);
      return shown;
    });
    return {
      game: "tortuga", viewer, players: s.players.slice(), variant: s.variant, round: s.round, phase: s.phase, step: s.step,
      stage: s.stage, start_player: s.players[s.start], bag: s.bag.reduce((a, b) => a + b, 0),
      bag_colours: Object.fromEntries(COLOURS.map((c, i) => [c, s.bag[i]])), tile_pool: s.pool.reduce((a, b) => a + b, 0),
      bonus_supply: s.bonus_supply, centre: s.centre.slice(),
      boards: Object.fromEntries(s.players.map((p, i) => [p, boardView(s, i, viewer)])),
      positions: Object.fromEntries(s.positions.map((pos, a) => [ACTIONS[a], pos.map(name)])),
      totals: Object.fromEntries(s.totals.map((ts, a) => [ACTIONS[a], Object.fromEntries(ts.map((t, i) => [s.players[i], t]).filter((x) => x[1] !== null))])),
      effects,
    };
  }

  function sets(b) {
    const everywhere = [...b.tortuga, ...b.fleet, ...b.crew, ...b.island];
    const counts = ["red", "blue", "yellow"].map((c) => count(everywhere, c)), wild = count(b.tortuga, "white");
    let best = 0;
    for (let n = 1; n <= Math.floor((counts[0] + counts[1] + counts[2] + wild) / 3); n++) {
      if (counts.reduce((a, c) => a + Math.max(0, n - c), 0) <= wild) best = n;
    }
    return best;
  }
  function scoreBoard(b) {
    let chests = 0;
    for (const [area, points] of [["tortuga", 3], ["fleet", 2], ["crew", 1]]) for (const c of b[area]) chests += points * (c === "purple" ? 2 : 1);
    const out = { chests, sets: 3 * sets(b), tracks: b.boat + b.pirate, coins: b.tiles.reduce((a, t) => a + t, 0) };
    out.total = out.chests + out.sets + out.tracks + out.coins;
    return out;
  }
  function result(s) {
    if (s.phase !== "over") return null;
    const scores = {};
    s.players.forEach((p, i) => { scores[p] = scoreBoard(s.boards[i]); });
    const top = Math.max(...Object.values(scores).map((x) => x.total));
    return { scores, winners: s.players.filter((p) => scores[p].total === top) };
  }
  function headline(s) { return { round: s.round, step: s.step, phase: s.phase, start_player: s.players[s.start] }; }

  P.games.tortuga = { name: "tortuga", checkPlayers, setup, pending, check, apply, default: defaultChoice, view, result, headline,
                      };
})(globalThis.PBEM = globalThis.PBEM || {});

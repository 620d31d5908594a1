"use strict";
// Tortuga 1667 (docs/rules-1667.md; draws: docs/protocol.md section 4), a second
// implementation of pbem/games/tortuga1667 written for the verifier page. A state is the
// plain JSON of the Python game's to_json(state); setup, pending, check, apply, default,
// view and result give what the Python functions give (tests/pages/test_js_1667.py
// compares them over whole bot games). Needs P.text (text.js) and P.ChoiceError.
(function (P) {
  var T = P.text;
  var HAS = Object.prototype.hasOwnProperty;

  var SHIPS = ["dutchman", "jolly"];
  var HOLDS = ["british", "french"];
  var SHIP_ROOM = 5, HAND_SIZE = 3, ROW_SIZE = 5, GALLEON_START = 4, TORTUGA_START = 2;
  var MAX_OPTIONS = 50;
  // players -> British, French, Dutch loyalty cards
  var LOYALTY = {4: [2, 2, 0], 5: [2, 2, 1], 6: [3, 3, 0], 7: [3, 3, 1], 8: [4, 4, 0], 9: [4, 4, 1]};
  var MIN_PLAYERS = 4, MAX_PLAYERS = 9;
  var VARIANTS = ["standard", "advanced"];
  var ATTACK_TOPS = [["cannon", 12], ["water", 12], ["torch", 16]];
  var VOTE_CARDS = (function () {  // card id -> [attack top, brawl flag, mutiny mark]
    var out = [];
    ATTACK_TOPS.forEach(function (t) {
      for (var k = 0; k < t[1]; k++) {
        out.push([t[0], k % 2 === 0 ? "british" : "french", Math.floor(k / 2) % 2 === 0 ? "skull" : "blank"]);
      }
    });
    return out;
  })();
  var EVENT_COUNTS = [["pistol", 2], ["marque", 4], ["blackspot", 3], ["albatross", 3],
    ["fountain", 1], ["atlantis", 1], ["eldorado", 1]];
  var STARRED = ["powder", "fever", "bells", "storm"];
  var STARRED_IN_PLAY = 3;
  var ARMADA = "armada";
  var RESERVED = ["rowboat", "tortuga", "dutchman", "jolly", "british", "french", "to"];
  var FOUNTAIN_CAUSES = ["blackspot", "pistol", "captain"];

  var SYNTAX = {
    stow: "stow british or stow french",
    action: "peek A,B | reveal A | force PLAYER A,B | move rowboat | move SHIP|tortuga | " +
      "attack | maroon PLAYER | mutiny | shift british|french | brawl | atlantis go (with " +
      "Atlantis: not an action) (A, B: row slots 1-5)",
    pick: "pick A (one of the two slots pointed at)",
    vote: "vote N (N: the number of a card in your hand; vote A,B: two cards with El Dorado)",
    loot: "stow HOLD, or steal SHIP HOLD to HOLD once the galleon is empty",
    shoot: "shoot PLAYER (anyone, yourself included)",
    marque: "marque draw, or marque send PLAYER SHIP (a player on Tortuga or in a rowboat)",
    top: "top N (the number of the card in your hand to put on the vote deck)",
    fever: "fever PLAYER (another player)",
    discard: "discard N (the number of the card in your hand to give up)",
    give: "give PLAYER (another player: the map's new owner)",
    fountain: "fountain use (stay where you are; the map is discarded) or fountain keep",
    atlantis: "atlantis go (to the last place of the other ship; the map is discarded) or atlantis stay",
    place: "place SHIP N (a free place 1-5 on dutchman or jolly) or place tortuga",
  };
  var ACTION_WORDS = ["peek", "reveal", "force", "move", "attack", "maroon", "mutiny", "shift", "brawl"];
  var KIND_OF_WORD = Object.create(null);
  ACTION_WORDS.forEach(function (w) { KIND_OF_WORD[w] = "action"; });
  [["pick", "pick"], ["vote", "vote"], ["stow", "stow"], ["steal", "loot"], ["shoot", "shoot"],
    ["marque", "marque"], ["top", "top"], ["fever", "fever"], ["discard", "discard"], ["give", "give"],
    ["fountain", "fountain"], ["atlantis", "atlantis"], ["place", "place"]].forEach(function (x) {
    KIND_OF_WORD[x[0]] = x[1];
  });
  var SHIP_ALIASES = Object.create(null);
  [["dutchman", "dutchman"], ["flyingdutchman", "dutchman"], ["fd", "dutchman"], ["jolly", "jolly"],
    ["jollyroger", "jolly"], ["roger", "jolly"], ["jr", "jolly"]].forEach(function (x) {
    SHIP_ALIASES[x[0]] = x[1];
  });

  // ------------------------------------------------------------------ plain data helpers

  function has(o, k) {
    return HAS.call(o, k);
  }

  // o[k] = v, also for a key such as "__proto__" (player names are keys)
  function put(o, k, v) {
    if (k === "__proto__") Object.defineProperty(o, k, {value: v, writable: true, enumerable: true, configurable: true});
    else o[k] = v;
    return o;
  }

  function clone(v) {
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) {
      var a = new Array(v.length);
      for (var i = 0; i < v.length; i++) a[i] = clone(v[i]);
      return a;
    }
    var o = {};
    for (var k in v) if (has(v, k)) put(o, k, clone(v[k]));
    return o;
  }

  function lists(o) {  // a dict of lists of atoms
    var out = {};
    for (var k in o) if (has(o, k)) put(out, k, o[k].slice());
    return out;
  }

  function flat(o) {  // a dict of atoms
    var out = {};
    for (var k in o) if (has(o, k)) put(out, k, o[k]);
    return out;
  }

  // a deep copy of a state, its effects left out (apply starts them afresh)
  function copyState(s) {
    return {
      game: s.game, players: s.players.slice(), loyalty: flat(s.loyalty), hands: lists(s.hands),
      vote_deck: s.vote_deck.slice(), ships: lists(s.ships), tortuga: s.tortuga.slice(), rowboats: flat(s.rowboats),
      sunk: s.sunk, holds: {dutchman: flat(s.holds.dutchman), jolly: flat(s.holds.jolly), tortuga: flat(s.holds.tortuga)},
      galleon: s.galleon, loose: s.loose, events: s.events.slice(), event_deck: s.event_deck.slice(), row: s.row.slice(),
      discard: s.discard.slice(), removed: s.removed.slice(), albatross: lists(s.albatross), maps: lists(s.maps),
      variant: s.variant, slots: s.slots === null ? null : lists(s.slots), bag: s.bag.slice(), seen: copySeen(s.seen),
      shuffles: s.shuffles, turn: s.turn, turn_no: s.turn_no, vote_no: s.vote_no, queue: clone(s.queue),
      vote: clone(s.vote), last_vote: clone(s.last_vote), phase: s.phase, outcome: clone(s.outcome), effects: [],
    };
  }

  function copySeen(seen) {
    var out = {};
    for (var p in seen) {
      if (has(seen, p)) put(out, p, seen[p].map(function (e) { return {card: e.card, slot: e.slot, turn: e.turn, shuffle: e.shuffle}; }));
    }
    return out;
  }

  function remove(list, x) {
    var i = list.indexOf(x);
    if (i < 0) throw new Error("list.remove(x): x not in list");
    list.splice(i, 1);
  }

  function pop0(list) {
    if (!list.length) throw new Error("pop from empty list");
    return list.shift();
  }

  function count(list, x) {
    var n = 0;
    for (var i = 0; i < list.length; i++) if (list[i] === x) n++;
    return n;
  }

  function sum(o) {
    var n = 0;
    for (var k in o) if (has(o, k)) n += o[k];
    return n;
  }

  function numSort(a) {
    return a.slice().sort(function (x, y) { return x - y; });
  }

  function voteFace(card) {
    return VOTE_CARDS[card].join(" ");
  }

  function choiceError(message, code) {
    return new P.ChoiceError(message, code);
  }

  // pbem/text.py quote: the repr of a user-given text, shortened (messages show it so)
  function quote(text) {
    return P.base.quote(text);
  }

  // ------------------------------------------------------------------ draws

  function draw(pool, rng, label) {
    var v = rng.below(label, pool.length);
    return pool.splice(v, 1)[0];
  }

  function dealOrder(pool, rng, label) {
    pool = pool.slice();
    var out = [], n = pool.length;
    for (var k = 0; k < n; k++) out.push(draw(pool, rng, label + "/" + k));
    return out;
  }

  function buildEventDeck(cards, armada, rng, label) {
    var deck = dealOrder(cards, rng, label);
    if (armada !== null) {
      var tail = Math.min(4, deck.length);
      deck.splice(deck.length - tail + rng.below(label + "/armada", tail + 1), 0, armada);
    }
    return deck;
  }

  // ------------------------------------------------------------------ where pawns are

  // ["ship", ship] | ["tortuga", null] | ["rowboat", ship]
  function placeOf(s, player) {
    for (var i = 0; i < 2; i++) if (s.ships[SHIPS[i]].indexOf(player) >= 0) return ["ship", SHIPS[i]];
    if (s.tortuga.indexOf(player) >= 0) return ["tortuga", null];
    for (i = 0; i < 2; i++) if (s.rowboats[SHIPS[i]] === player) return ["rowboat", SHIPS[i]];
    throw new Error(player + " is nowhere");
  }

  function ranks(s, player) {
    var at = placeOf(s, player);
    if (at[0] === "tortuga") return s.tortuga[0] === player ? ["governor"] : [];
    if (at[0] !== "ship") return [];
    var crew = s.ships[at[1]], out = [];
    if (crew[0] === player) out.push("captain");
    if (crew.length > 1 && crew[1] === player) out.push("mate");
    if (crew[crew.length - 1] === player) out.push("boy");
    return out;
  }

  function holdsMap(s, player, name) {
    var cards = has(s.maps, player) ? s.maps[player] : [];
    for (var i = 0; i < cards.length; i++) if (s.events[cards[i]] === name) return cards[i];
    return null;
  }

  function teamTotals(s) {
    var out = {british: 0, french: 0};
    for (var place in s.holds) {
      if (has(s.holds, place)) HOLDS.forEach(function (t) { out[t] += s.holds[place][t]; });
    }
    return out;
  }

  function slots(s) {
    var out = [];
    for (var i = 0; i < s.row.length; i++) if (s.row[i] !== null) out.push(i + 1);
    return out;
  }

  function after(s, player) {
    var k = s.players.indexOf(player);
    return s.players.slice(k + 1).concat(s.players.slice(0, k));
  }

  function otherShip(ship) {
    return SHIPS[1 - SHIPS.indexOf(ship)];
  }

  // ------------------------------------------------------------------ the board

  function takeOff(s, player) {
    var at = placeOf(s, player);
    if (at[0] === "ship") remove(s.ships[at[1]], player);
    else if (at[0] === "tortuga") remove(s.tortuga, player);
    else s.rowboats[at[1]] = null;
    return at;
  }

  function maroon(s, player, why) {
    var at = takeOff(s, player);
    s.tortuga.push(player);
    s.effects.push({type: "maroon", player: player, from: at[1] || at[0], why: why});
    if (at[0] === "tortuga" && s.hands[player].length) s.queue.unshift({kind: "discard", player: player});
  }

  function boardShip(s, player, ship, why) {
    if (s.ships[ship].length >= SHIP_ROOM) throw new Error("a full ship");
    takeOff(s, player);
    s.ships[ship].push(player);
    s.effects.push({type: "board", player: player, ship: ship, why: why});
    checkAlbatross(s);
  }

  function albatrosses(s, ship) {
    var n = 0;
    s.ships[ship].forEach(function (p) { n += s.albatross[p].length; });
    return n;
  }

  function checkAlbatross(s) {
    SHIPS.forEach(function (ship) {
      if (albatrosses(s, ship) >= 2) {
        s.ships[ship].slice().reverse().forEach(function (p) { maroon(s, p, "albatross"); });
      }
    });
  }

  function rowboatMoves(s, player) {
    if (s.sunk) return [];
    var at = placeOf(s, player);
    if (at[0] === "rowboat") {
      var out = s.ships[at[1]].length < SHIP_ROOM ? ["move " + at[1]] : [];
      return out.concat(["move tortuga"]);
    }
    var boats = at[0] === "ship" ? [at[1]] : SHIPS;
    return boats.filter(function (b) { return s.rowboats[b] === null; }).map(function (b) { return "move rowboat " + b; });
  }

  function doMove(s, player, target) {
    if (target[0] === "rowboat") {
      takeOff(s, player);
      s.rowboats[target[1]] = player;
      s.effects.push({type: "rowboat", player: player, ship: target[1]});
    } else if (target[0] === "tortuga") {
      takeOff(s, player);
      s.tortuga.push(player);
      s.effects.push({type: "land", player: player});
    } else {
      boardShip(s, player, target[0], "rowboat");
    }
  }

  // ------------------------------------------------------------------ treasure maps

  function give(s, giver, owner, card) {
    remove(s.maps[giver], card);
    if (!has(s.maps, owner)) put(s.maps, owner, []);
    s.maps[owner].push(card);
    var name = s.events[card];
    s.effects.push({type: "map-given", player: giver, owner: owner, map: name});
    if (name === "eldorado" && s.vote_deck.length) {
      var drawn = s.vote_deck.shift();
      s.hands[owner] = s.hands[owner].concat([drawn]);
      s.effects.push({type: "eldorado-draw", player: owner, private: put({}, owner, {drew: voteFace(drawn)})});
    }
  }

  function use(s, player, name) {
    var card = holdsMap(s, player, name);
    remove(s.maps[player], card);
    s.discard.push(card);
    s.effects.push({type: "map-used", player: player, map: name});
  }

  function atlantisTarget(s, player) {
    if (holdsMap(s, player, "atlantis") === null) return null;
    var at = placeOf(s, player);
    if (at[0] !== "ship") return null;
    var target = otherShip(at[1]);
    return s.ships[target].length < SHIP_ROOM ? target : null;
  }

  function sail(s, player) {
    var target = atlantisTarget(s, player);
    use(s, player, "atlantis");
    boardShip(s, player, target, "atlantis");
  }

  function maroonMatters(s, player) {
    return !(s.tortuga.length && s.tortuga[s.tortuga.length - 1] === player && !s.hands[player].length);
  }

  function threaten(s, player, why, by) {
    if (by === undefined) by = null;
    if (FOUNTAIN_CAUSES.indexOf(why) >= 0 && holdsMap(s, player, "fountain") !== null && maroonMatters(s, player)) {
      s.queue.unshift({kind: "fountain", player: player, why: why, by: by});
    } else if (why === "captain" && atlantisTarget(s, player)) {
      s.queue.unshift({kind: "atlantis", player: player, why: "maroon", by: by});
    } else {
      maroon(s, player, why);
    }
  }

  function answerFountain(s, player, choice, entry) {
    if (choice === "fountain use") {
      use(s, player, "fountain");
      var e = {type: "spared", player: player, why: entry.why};
      if (entry.by) e.by = entry.by;
      s.effects.push(e);
    } else if (entry.why === "captain" && atlantisTarget(s, player)) {
      s.queue.unshift({kind: "atlantis", player: player, why: "maroon", by: entry.by});
    } else {
      maroon(s, player, entry.why);
    }
  }

  function answerAtlantisMaroon(s, player, choice, entry) {
    if (choice === "atlantis go") {
      sail(s, player);
      s.queue.unshift({kind: "action", player: entry.by});
    } else {
      maroon(s, player, "captain");
    }
  }

  function voteQuestion(s, ship) {
    if (ship === null) return null;
    var crew = s.ships[otherShip(ship)];
    for (var i = 0; i < crew.length; i++) if (atlantisTarget(s, crew[i]) === ship) return crew[i];
    return null;
  }

  // ------------------------------------------------------------------ votes

  function votersFor(s, kind, caller) {
    var ship = placeOf(s, caller)[1], crew;
    if (kind === "attack") crew = s.ships[ship].slice();
    else if (kind === "mutiny") crew = s.ships[ship].slice(1);
    else {
      crew = s.tortuga.slice();
      ship = null;
    }
    return [ship, crew.filter(function (p) { return s.hands[p].length > 0; })];
  }

  function callVote(s, kind, caller, rng) {
    var x = votersFor(s, kind, caller), ship = x[0], voters = x[1];
    s.vote_no += 1;
    s.vote = {kind: kind, caller: caller, ship: ship, voters: voters, cards: {}};
    s.effects.push({type: "vote-called", kind: kind, caller: caller, ship: ship, voters: voters.slice()});
    var owner = voteQuestion(s, ship);
    if (owner !== null) s.queue.unshift({kind: "atlantis", player: owner, why: "vote"});
    else openVote(s, rng);
  }

  function openVote(s, rng) {
    if (s.vote.voters.length) s.queue.unshift({kind: "vote"});
    else resolve(s, rng);
  }

  function afterAtlantis(s, player, went, rng) {
    var vote = s.vote;
    if (went) {
      sail(s, player);
      var ship = placeOf(s, vote.caller)[1];
      var rank = {attack: "captain", mutiny: "mate"}[vote.kind];
      if (ship !== vote.ship || ranks(s, vote.caller).indexOf(rank) < 0) {
        s.vote = null;
        s.effects.push({type: "vote-off", kind: vote.kind, caller: vote.caller});
        return;
      }
      vote.voters = votersFor(s, vote.kind, vote.caller)[1];
      s.effects.push({type: "voters", voters: vote.voters.slice()});
    }
    openVote(s, rng);
  }

  function cast(s, player, indices, rng) {
    put(s.vote.cards, player, indices.map(function (k) { return s.hands[player][k]; }));
    if (Object.keys(s.vote.cards).length === s.vote.voters.length) {
      s.queue.shift();
      resolve(s, rng);
    }
  }

  function tally(kind, cards) {
    var faces = cards.map(function (c) { return VOTE_CARDS[c]; });
    if (kind === "attack") {
      var tops = faces.map(function (f) { return f[0]; });
      var ok = count(tops, "cannon") >= 1 && count(tops, "torch") > count(tops, "water");
      return ok ? "success" : "failure";
    }
    if (kind === "mutiny") {
      var marks = faces.map(function (f) { return f[2]; });
      return count(marks, "skull") > count(marks, "blank") ? "success" : "failure";
    }
    var flags = faces.map(function (f) { return f[1]; });
    var b = count(flags, "british"), fr = count(flags, "french");
    return b > fr ? "british" : fr > b ? "french" : "tie";
  }

  function resolve(s, rng) {
    var vote = s.vote;
    s.vote = null;
    var played = [];
    vote.voters.forEach(function (p) {
      vote.cards[p].forEach(function (card) {
        remove(s.hands[p], card);
        played.push(card);
      });
      if (vote.cards[p].length === 2) use(s, p, "eldorado");
    });
    var pool = played.concat(s.vote_deck.length ? [s.vote_deck.shift()] : []);
    var shown = dealOrder(pool, rng, "vote" + s.vote_no + "/shuffle");
    var outcome = tally(vote.kind, shown);
    Array.prototype.push.apply(s.vote_deck, dealOrder(shown, rng, "vote" + s.vote_no + "/under"));
    var priv = {};
    vote.voters.forEach(function (p) {
      var drawn = pop0(s.vote_deck);
      s.hands[p] = s.hands[p].concat([drawn]);
      put(priv, p, {played: vote.cards[p].map(voteFace).join(" + "), drew: voteFace(drawn)});
    });
    s.last_vote = {kind: vote.kind, caller: vote.caller, ship: vote.ship, voters: vote.voters,
      cards: shown.map(voteFace), outcome: outcome};
    var e = {type: "vote"};
    for (var k in s.last_vote) if (has(s.last_vote, k)) e[k] = clone(s.last_vote[k]);
    e.private = priv;
    s.effects.push(e);
    var kind = vote.kind, caller = vote.caller;
    if (kind === "attack" && outcome === "success") {
      if (lootOptions(s, caller).length) s.queue.unshift({kind: "loot", player: caller});
      else s.effects.push({type: "loot", player: caller, took: null});
    } else if (kind === "mutiny" && outcome === "success" && s.ships[vote.ship].length) {
      maroon(s, s.ships[vote.ship][0], "mutiny");
    } else if (kind === "brawl") {
      var total = s.loose + sum(s.holds.tortuga);
      var split = {british: [total, 0], french: [0, total], tie: [total - Math.floor(total / 2), Math.floor(total / 2)]}[outcome];
      s.holds.tortuga = {british: split[0], french: split[1]};
      s.loose = 0;
    }
  }

  function lootOptions(s, captain) {
    var at = placeOf(s, captain);
    if (at[0] !== "ship") return [];
    if (s.galleon) return HOLDS.map(function (h) { return "stow " + h; });
    var out = [];
    SHIPS.forEach(function (ship) {
      HOLDS.forEach(function (src) {
        HOLDS.forEach(function (dst) {
          if (s.holds[ship][src] && !(ship === at[1] && src === dst)) out.push("steal " + ship + " " + src + " to " + dst);
        });
      });
    });
    return out;
  }

  function doLoot(s, captain, w) {
    var own = placeOf(s, captain)[1], took;
    if (w[0] === "stow") {
      s.galleon -= 1;
      took = "galleon";
      s.holds[own][w[1]] += 1;
    } else {
      s.holds[w[1]][w[2]] -= 1;
      s.holds[own][w[4]] += 1;
      took = w[1] + " " + w[2];
    }
    s.effects.push({type: "loot", player: captain, took: took, into: own + " " + w[w.length - 1]});
  }

  // ------------------------------------------------------------------ event cards

  function reveal(s, player, slot, rng) {
    var card = s.row[slot];
    s.row[slot] = s.event_deck.length ? s.event_deck.shift() : null;
    var name = s.events[card];
    s.effects.push({type: "reveal", player: player, slot: slot + 1, card: name});
    var eff = EFFECTS[name];
    if (eff[0] === "discard") s.discard.push(card);
    eff[1](s, player, card, rng);
  }

  function ask(kind) {
    return function (s, player) { s.queue.unshift({kind: kind, player: player}); };
  }

  function blackSpot(s, player) {
    threaten(s, player, "blackspot");
  }

  function aMap(s, player, card) {
    if (!has(s.maps, player)) put(s.maps, player, []);
    s.maps[player].push(card);
    s.queue.unshift({kind: "give", player: player, card: card});
  }

  function albatross(s, player, card) {
    s.albatross[player].push(card);
    checkAlbatross(s);
  }

  function blackPowder(s) {
    s.effects.push({type: "powder", aboard: SHIPS.filter(function (b) { return s.rowboats[b] !== null; })
      .map(function (b) { return s.rowboats[b]; })});
    SHIPS.forEach(function (ship) {
      if (s.rowboats[ship] !== null) maroon(s, s.rowboats[ship], "powder");
    });
    s.sunk = true;
  }

  function eightBells(s, player, card, rng) {
    var at = placeOf(s, player), label = "t" + s.turn_no + "/bells";
    if (at[0] === "ship") {
      s.ships[at[1]] = dealOrder(s.ships[at[1]], rng, label);
      s.effects.push({type: "bells", place: at[1], order: s.ships[at[1]].slice()});
    } else if (at[0] === "tortuga") {
      s.tortuga = dealOrder(s.tortuga, rng, label);
      s.effects.push({type: "bells", place: "tortuga", order: s.tortuga.slice()});
    } else {
      s.effects.push({type: "bells", place: null});
    }
  }

  function stormySeas(s, player) {
    var at = placeOf(s, player);
    if (at[0] === "ship") {
      s.galleon += sum(s.holds[at[1]]);
      s.holds[at[1]] = {british: 0, french: 0};
    } else if (at[0] === "tortuga") {
      s.loose += sum(s.holds.tortuga);
      s.holds.tortuga = {british: 0, french: 0};
    }
    // a rowboat names its ship here, as the Python does (nothing moves)
    s.effects.push({type: "storm", place: at[1] || (at[0] === "tortuga" ? "tortuga" : null)});
  }

  function armada(s, player, card, rng) {
    var totals = teamTotals(s);
    s.effects.push({type: "armada", totals: totals});
    var n = s.players.length;
    if (totals.british !== totals.french || n % 2) s.discard.push(card);
    if (totals.british !== totals.french) finish(s, totals.british > totals.french ? "british" : "french");
    else if (n % 2) finish(s, "dutch");
    else suddenDeath(s, card, rng);
  }

  function finish(s, winner) {
    s.phase = "over";
    s.queue = [];
    s.outcome = {winner: winner, totals: teamTotals(s)};
    s.effects.push({type: "end", winner: winner});
  }

  function suddenDeath(s, armadaCard, rng) {
    s.removed.push(armadaCard);
    var pool = s.discard.concat(s.row.filter(function (c) { return c !== null; }), s.event_deck);
    s.discard = [];
    s.shuffles += 1;
    s.event_deck = buildEventDeck(pool, null, rng, "tiebreak" + s.shuffles);
    s.row = [];
    for (var i = 0; i < ROW_SIZE; i++) s.row.push(s.event_deck.length ? s.event_deck.shift() : null);
    s.phase = "sudden";
    s.effects.push({type: "tie-break"});
  }

  var EFFECTS = {
    pistol: ["discard", ask("shoot")],
    marque: ["discard", ask("marque")],
    blackspot: ["discard", blackSpot],
    albatross: ["keep", albatross],
    fountain: ["keep", aMap],
    atlantis: ["keep", aMap],
    eldorado: ["keep", aMap],
    powder: ["discard", blackPowder],
    fever: ["discard", ask("fever")],
    bells: ["discard", eightBells],
    storm: ["discard", stormySeas],
    armada: ["keep", armada],
  };

  function swapLoyalties(s, player, other, rng) {
    var cards = [s.loyalty[player], s.loyalty[other]];
    var first = cards.splice(rng.below("t" + s.turn_no + "/fever", 2), 1)[0];
    s.loyalty[player] = first;
    s.loyalty[other] = cards[0];
    var priv = {};
    put(priv, player, {loyalty: s.loyalty[player]});
    put(priv, other, {loyalty: s.loyalty[other]});
    s.effects.push({type: "fever", player: player, other: other, private: priv});
  }

  // ------------------------------------------------------------------ set-up

  function fold(name) {
    return T.casefold(T.nfkc(name));
  }

  var ODD = /[\p{C}\p{Z}]/u;

  function checkPlayers(players) {
    players = Array.from(players);
    if (players.length < MIN_PLAYERS || players.length > MAX_PLAYERS) {
      throw new Error("Tortuga 1667 takes " + MIN_PLAYERS + " to " + MAX_PLAYERS + " players, got " + players.length);
    }
    var seen = new Set();
    players.forEach(function (name) {
      if (typeof name !== "string" || !name || T.length(name) > 40) throw new Error("player name must be 1 to 40 characters");
      for (var ch of name) {
        var cp = ch.codePointAt(0);
        if (T.isSpace(cp) || ch === "," || ODD.test(ch) || T.unassigned(cp)) {
          throw new Error("player name may not contain spaces, commas or invisible characters");
        }
      }
      if (T.split(T.nfkc(name).replace(/,/g, " ")).length !== 1) throw new Error("player name reads as several words");
      var key = fold(name);
      if (RESERVED.indexOf(key) >= 0) throw new Error("player name is a word of the choice syntax");
      if (seen.has(key)) throw new Error("player name is given twice");
      seen.add(key);
    });
    return players;
  }

  // pbem/games/tortuga1667/setup.py check_options: dict(options or {}), Python's truth and words
  function checkOptions(options) {
    var B = P.base;
    options = B.pyDict(options);
    var unknown = Object.keys(options).filter(function (k) { return k !== "variant"; }).sort(B.byCodePoint);
    if (unknown.length) throw new Error("Tortuga 1667 takes only the option variant (standard or advanced), not " + unknown.join(", "));
    var variant = B.pyTrue(options.variant) ? options.variant : "standard";
    if (VARIANTS.indexOf(variant) < 0) throw new Error("unknown variant " + B.quote(variant) + "; use standard or advanced");
    return variant;
  }

  function newState(players, variant) {
    return {
      game: "tortuga1667", players: players, loyalty: {}, hands: {}, vote_deck: [], ships: {}, tortuga: [],
      rowboats: {}, sunk: false, holds: {}, galleon: GALLEON_START, loose: TORTUGA_START, events: [],
      event_deck: [], row: [], discard: [], removed: [], albatross: {}, maps: {}, variant: variant,
      slots: null, bag: [], seen: {}, shuffles: 0, turn: 0, turn_no: 1, vote_no: 0, queue: [], vote: null,
      last_vote: null, phase: "play", outcome: null, effects: [],
    };
  }

  function setup(players, options, rng) {
    players = checkPlayers(players);
    var variant = checkOptions(options);
    var s = newState(players.slice(), variant);
    var t = LOYALTY[players.length], cards = [];
    ["british", "french", "dutch"].forEach(function (team, i) { for (var k = 0; k < t[i]; k++) cards.push(team); });
    players.forEach(function (p) { put(s.loyalty, p, draw(cards, rng, "setup/loyalty/" + p)); });

    var votes = [];
    for (var c = 0; c < VOTE_CARDS.length; c++) votes.push(c);
    for (var k = 0; k < HAND_SIZE; k++) {
      players.forEach(function (p) {
        if (!has(s.hands, p)) put(s.hands, p, []);
        s.hands[p].push(draw(votes, rng, "setup/hand/" + p + "/" + k));
      });
    }
    s.vote_deck = dealOrder(votes, rng, "setup/vote-deck");

    var names = [];
    EVENT_COUNTS.forEach(function (x) { for (var i = 0; i < x[1]; i++) names.push(x[0]); });
    var starred = STARRED.slice(), chosen = [];
    for (k = 0; k < STARRED_IN_PLAY; k++) chosen.push(draw(starred, rng, "setup/starred/" + k));
    s.events = names.concat(chosen.sort(), [ARMADA]);
    var armadaCard = s.events.indexOf(ARMADA), others = [];
    for (var i = 0; i < s.events.length; i++) if (i !== armadaCard) others.push(i);
    s.event_deck = buildEventDeck(others, armadaCard, rng, "setup/event-deck");
    for (i = 0; i < ROW_SIZE; i++) s.row.push(s.event_deck.shift());

    s.ships = {dutchman: [], jolly: []};
    s.rowboats = {dutchman: null, jolly: null};
    s.holds = {dutchman: {british: 0, french: 0}, jolly: {british: 0, french: 0}, tortuga: {british: 0, french: 0}};
    players.forEach(function (p) {
      put(s.albatross, p, []);
      put(s.maps, p, []);
      put(s.seen, p, []);
    });
    if (variant === "advanced") return advanced(s, rng);
    dealOrder(players, rng, "setup/pawns").forEach(function (p, j) { s.ships[SHIPS[j % 2]].push(p); });
    s.queue = [{kind: "stow", player: s.ships.jolly[0], ship: "jolly"},
      {kind: "stow", player: s.ships.dutchman[0], ship: "dutchman"},
      {kind: "action", player: s.ships.jolly[0]}];
    s.turn = players.indexOf(s.ships.jolly[0]);
    s.effects = [{type: "setup", dutchman: s.ships.dutchman.slice(), jolly: s.ships.jolly.slice(), first: s.ships.jolly[0]}];
    return s;
  }

  function advanced(s, rng) {
    s.holds.dutchman.british = 1;
    s.holds.jolly.french = 1;
    s.slots = {dutchman: [null, null, null, null, null], jolly: [null, null, null, null, null]};
    s.bag = s.players.slice();
    s.effects = [{type: "setup", variant: "advanced"}];
    drawPawn(s, rng);
    return s;
  }

  function drawPawn(s, rng) {
    var k = s.players.length - s.bag.length;
    var p = draw(s.bag, rng, "setup/pawns/" + k);
    s.queue.unshift({kind: "place", player: p});
    s.effects.push({type: "drawn", player: p});
  }

  function placeOptions(s) {
    var out = [];
    SHIPS.forEach(function (ship) {
      s.slots[ship].forEach(function (p, k) { if (p === null) out.push("place " + ship + " " + (k + 1)); });
    });
    return out.concat(["place tortuga"]);
  }

  function placeDefault(s) {
    var free = SHIPS.filter(function (ship) { return s.slots[ship].indexOf(null) >= 0; });
    if (!free.length) return "place tortuga";
    var best = null, bestKey = null;
    free.forEach(function (ship) {
      var key = [SHIP_ROOM - count(s.slots[ship], null), SHIPS.indexOf(ship)];
      if (best === null || key[0] < bestKey[0] || (key[0] === bestKey[0] && key[1] < bestKey[1])) {
        best = ship;
        bestKey = key;
      }
    });
    return "place " + best + " " + (s.slots[best].indexOf(null) + 1);
  }

  function place(s, player, where, rng) {
    if (where[0] === "tortuga") s.tortuga.push(player);
    else s.slots[where[0]][parseInt(where[1], 10) - 1] = player;
    SHIPS.forEach(function (ship) { s.ships[ship] = s.slots[ship].filter(function (p) { return p !== null; }); });
    s.effects.push({type: "placed", player: player, place: where.join(" ")});
    if (s.bag.length) {
      drawPawn(s, rng);
      return;
    }
    s.slots = null;
    var first = (s.ships.jolly.length ? s.ships.jolly : s.ships.dutchman.length ? s.ships.dutchman : s.tortuga)[0];
    s.turn = s.players.indexOf(first);
    s.queue.unshift({kind: "action", player: first});
    s.effects.push({type: "setup", dutchman: s.ships.dutchman.slice(), jolly: s.ships.jolly.slice(),
      tortuga: s.tortuga.slice(), first: first});
  }

  // ------------------------------------------------------------------ legal choices

  var rowMemo = new Map();

  // peek, reveal and force over the face-down slots: the bulk of a turn's options, the same
  // for many turns (kept, as the Python keeps them)
  function rowOptions(s, player) {
    var cards = slots(s), key = s.players.join("\u0001") + "\u0000" + player + "\u0000" + cards.join(",");
    var out = rowMemo.get(key);
    if (out !== undefined) return out;
    var others = after(s, player);
    out = [];
    if (cards.length >= 2) {
      cards.forEach(function (a) { cards.forEach(function (b) { if (a < b) out.push("peek " + a + "," + b); }); });
    }
    cards.forEach(function (a) { out.push("reveal " + a); });
    if (cards.length >= 2) {
      others.forEach(function (p) {
        cards.forEach(function (a) { cards.forEach(function (b) { if (a !== b) out.push("force " + p + " " + a + "," + b); }); });
      });
    }
    if (rowMemo.size >= 1024) rowMemo.clear();
    rowMemo.set(key, out);
    return out;
  }

  var ROW_CHOICE = /^(?:peek ([1-9]),([1-9])|reveal ([1-9])|force (\S+) ([1-9]),([1-9]))$/;

  // text is one of rowOptions(s, player), without listing them (most turns' choice)
  function isRowOption(s, player, text) {
    var m = ROW_CHOICE.exec(text);
    if (m === null) return false;
    var down = function (x) { return x <= s.row.length && s.row[x - 1] !== null; };
    if (m[3] !== undefined) return down(Number(m[3]));
    var many = slots(s).length >= 2;
    if (m[1] !== undefined) return many && Number(m[1]) < Number(m[2]) && down(Number(m[1])) && down(Number(m[2]));
    return many && m[4] !== player && s.players.indexOf(m[4]) >= 0 && m[5] !== m[6] && down(Number(m[5])) && down(Number(m[6]));
  }

  function actionOptions(s, player) {
    var out = rowOptions(s, player).concat(rowboatMoves(s, player));
    if (atlantisTarget(s, player)) out.push("atlantis go");
    var r = ranks(s, player), ship = placeOf(s, player)[1];
    if (r.indexOf("captain") >= 0) {
      out.push("attack");
      s.ships[ship].slice(1).forEach(function (p) { out.push("maroon " + p); });
    }
    if (r.indexOf("mate") >= 0) out.push("mutiny");
    if (r.indexOf("boy") >= 0) {
      HOLDS.forEach(function (a) {
        HOLDS.forEach(function (b) { if (a !== b && s.holds[ship][a]) out.push("shift " + a + " to " + b); });
      });
    }
    if (r.indexOf("governor") >= 0) out.push("brawl");
    return out;
  }

  function options(s, player, kind, entry) {
    var out, i;
    switch (kind) {
      case "stow": return HOLDS.map(function (h) { return "stow " + h; });
      case "action": return actionOptions(s, player);
      case "pick": return entry.slots.map(function (a) { return "pick " + a; });
      case "vote": case "top": case "discard": {
        var size = s.hands[player].length;
        out = [];
        for (i = 1; i <= size; i++) out.push(kind + " " + i);
        if (kind === "vote" && holdsMap(s, player, "eldorado") !== null) {
          for (var a = 1; a <= size; a++) for (var b = a + 1; b <= size; b++) out.push("vote " + a + "," + b);
        }
        return out;
      }
      case "give": return after(s, player).map(function (p) { return "give " + p; });
      case "fountain": return ["fountain keep", "fountain use"];
      case "atlantis": return ["atlantis stay", "atlantis go"];
      case "place": return placeOptions(s);
      case "loot": return lootOptions(s, player);
      case "shoot": return after(s, player).concat([player]).map(function (p) { return "shoot " + p; });
      case "fever": return after(s, player).map(function (p) { return "fever " + p; });
      case "marque": {
        out = ["marque draw"];
        var who = s.tortuga.concat(SHIPS.filter(function (b) { return s.rowboats[b]; }).map(function (b) { return s.rowboats[b]; }));
        who.forEach(function (p) {
          SHIPS.forEach(function (ship) { if (s.ships[ship].length < SHIP_ROOM) out.push("marque send " + p + " " + ship); });
        });
        return out;
      }
    }
    throw new Error("unknown kind " + kind);
  }

  function defaultOf(s, player, kind, entry) {
    if (kind === "action") {
      var cards = slots(s);
      if (cards.length < 2) return "reveal " + cards[0];
      var known = new Set();
      s.seen[player].forEach(function (e) {
        if (e.shuffle === s.shuffles && s.row[e.slot - 1] === e.card) known.add(e.slot);
      });
      var pair = cards.filter(function (c) { return !known.has(c); })
        .concat(cards.filter(function (c) { return known.has(c); })).slice(0, 2);
      pair = numSort(pair);
      return "peek " + pair[0] + "," + pair[1];
    }
    if (kind === "top") return "top " + (s.hands[player].indexOf(entry.drawn) + 1);
    if (kind === "place") return placeDefault(s);
    return options(s, player, kind, entry)[0];
  }

  // ------------------------------------------------------------------ what is owed

  function owed(s) {
    if (s.phase === "over" || !s.queue.length) return [];
    var entry = s.queue[0];
    if (entry.kind === "vote") {
      return s.vote.voters.filter(function (p) { return !has(s.vote.cards, p); })
        .map(function (p) { return [p, "vote", entry]; });
    }
    return [[entry.player, entry.kind, entry]];
  }

  function pending(s) {
    return owed(s).map(function (x) {
      var opts = options(s, x[0], x[1], x[2]);
      return {
        player: x[0], kind: x[1], sealed: x[1] === "vote", round: s.turn_no, step: s.vote_no,
        default: defaultOf(s, x[0], x[1], x[2]), syntax: SYNTAX[x[1]],
        options: opts.length <= MAX_OPTIONS ? opts : null, anonymous: x[1] === "vote",
        allOptions: opts.length > MAX_OPTIONS ? opts : null,
      };
    });
  }

  function defaultChoice(s, player, kind) {
    var o = owed(s);
    for (var i = 0; i < o.length; i++) if (o[i][0] === player && o[i][1] === kind) return defaultOf(s, player, kind, o[i][2]);
    throw new Error(player + " owes no " + kind + " choice now");
  }

  // ------------------------------------------------------------------ reading a choice

  function words(text) {
    return T.split(T.nfkc(text).replace(/,/g, " "));
  }

  function firstWord(text) {
    var w = words(text);
    return w.length ? T.casefold(w[0]) : "";
  }

  function canonical(s, word, text, rowboats) {
    var rest = words(text).slice(1), said = T.strip(text);

    function syntaxError(what, code) {
      return choiceError("not understood: " + quote(said) + ": " + what, code || "syntax");
    }
    function need(n, what) {
      if (rest.length !== n) throw syntaxError("expected " + what);
    }
    function number(token) {
      if (!T.isDecimal(token) || T.length(token) > 3) throw syntaxError(quote(token) + " is not a number");
      return T.decimalValue(token);
    }
    function player(token) {
      var key = fold(token);
      for (var i = 0; i < s.players.length; i++) if (fold(s.players[i]) === key) return s.players[i];
      throw syntaxError("no player " + quote(token) + "; players: " + s.players.join(", "), "unknown-player");
    }
    function hold(token) {
      var t = T.casefold(token);
      if (HOLDS.indexOf(t) < 0) throw syntaxError(quote(token) + " is not a hold; holds: british, french");
      return t;
    }
    function ship(token) {
      var t = T.casefold(token).replace(/-/g, "").replace(/_/g, "");
      if (!(t in SHIP_ALIASES)) throw syntaxError(quote(token) + " is not a ship; ships: dutchman, jolly");
      return SHIP_ALIASES[t];
    }

    var a, b;
    if (word === "attack" || word === "mutiny" || word === "brawl") {
      need(0, word + " alone");
      return word;
    }
    if (word === "peek") {
      need(2, "two slots, e.g. peek 2,4");
      a = number(rest[0]);
      b = number(rest[1]);
      return "peek " + Math.min(a, b) + "," + Math.max(a, b);
    }
    if (word === "vote" && rest.length === 2) {
      a = number(rest[0]);
      b = number(rest[1]);
      return "vote " + Math.min(a, b) + "," + Math.max(a, b);
    }
    if (["reveal", "pick", "vote", "top", "discard"].indexOf(word) >= 0) {
      need(1, "one number, e.g. " + word + " 2");
      return word + " " + number(rest[0]);
    }
    if (word === "force") {
      need(3, "a player and two slots, e.g. force bob 1,5");
      var p = player(rest[0]);
      a = number(rest[1]);
      b = number(rest[2]);
      return "force " + p + " " + a + "," + b;
    }
    if (word === "fountain" || word === "atlantis") {
      var answers = word === "fountain" ? ["use", "keep"] : ["go", "stay"];
      if (rest.length !== 1 || answers.indexOf(T.casefold(rest[0])) < 0) throw syntaxError("expected " + word + " " + answers[0] + " or " + word + " " + answers[1]);
      return word + " " + T.casefold(rest[0]);
    }
    if (word === "place") {
      if (rest.length === 1 && T.casefold(rest[0]) === "tortuga") return "place tortuga";
      need(2, "place SHIP N (N: a place 1-5) or place tortuga");
      var sh = ship(rest[0]);
      return "place " + sh + " " + number(rest[1]);
    }
    if (["maroon", "shoot", "fever", "give"].indexOf(word) >= 0) {
      need(1, "one player, e.g. " + word + " " + s.players[0]);
      return word + " " + player(rest[0]);
    }
    if (word === "move") {
      if (!rest.length) throw syntaxError("expected where to: move rowboat, move SHIP or move tortuga");
      var to = T.casefold(rest[0]);
      if (to === "rowboat") {
        if (rest.length === 2) return "move rowboat " + ship(rest[1]);
        need(1, "move rowboat, or move rowboat SHIP from Tortuga");
        return rowboats.length === 1 ? rowboats[0] : "move rowboat";
      }
      need(1, "one place: move SHIP or move tortuga");
      return to === "tortuga" ? "move tortuga" : "move " + ship(rest[0]);
    }
    if (word === "shift") {
      if (rest.length === 1 || (rest.length === 3 && T.casefold(rest[1]) === "to")) {
        var src = hold(rest[0]);
        var dst = rest.length === 3 ? hold(rest[2]) : HOLDS.filter(function (h) { return h !== src; })[0];
        return "shift " + src + " to " + dst;
      }
      throw syntaxError("expected shift HOLD (to HOLD), e.g. shift british");
    }
    if (word === "stow") {
      need(1, "one hold: stow british or stow french");
      return "stow " + hold(rest[0]);
    }
    if (word === "steal") {
      if (rest.length === 4 && T.casefold(rest[2]) === "to") {
        var from = ship(rest[0]), h1 = hold(rest[1]), h2 = hold(rest[3]);
        return "steal " + from + " " + h1 + " to " + h2;
      }
      throw syntaxError("expected steal SHIP HOLD to HOLD, e.g. steal dutchman french to british");
    }
    if (word === "marque") {
      if (rest.length && T.casefold(rest[0]) === "draw" && rest.length === 1) return "marque draw";
      if (rest.length === 3 && T.casefold(rest[0]) === "send") {
        var who = player(rest[1]);
        return "marque send " + who + " " + ship(rest[2]);
      }
      throw syntaxError("expected marque draw, or marque send PLAYER SHIP");
    }
    throw new Error("no reader for " + word);
  }

  var NEEDS = {attack: "captain", maroon: "captain", mutiny: "mate", shift: "boy", brawl: "governor"};
  var TITLES = {captain: "a captain", mate: "a first mate", boy: "a cabin boy", governor: "the governor of Tortuga"};

  // [code, reason] for a well-formed choice that is not among the legal options
  function whyIllegal(s, player, kind, choice) {
    var w = choice.split(" ");
    if (kind === "action" && has(NEEDS, w[0]) && ranks(s, player).indexOf(NEEDS[w[0]]) < 0) {
      return ["no-rank", "only " + TITLES[NEEDS[w[0]]] + " may " + w[0]];
    }
    if ((w[0] === "peek" || w[0] === "force") && slots(s).length < 2) return ["row-short", "only one card is left in the row: reveal it"];
    if (["peek", "reveal", "force", "pick"].indexOf(w[0]) >= 0) {
      var nums = (w[0] === "force" ? w[2] : w[w.length - 1]).split(",").map(Number);
      if (w[0] === "force" && w[1] === player) return ["force-self", "you cannot force yourself"];
      if (new Set(nums).size < nums.length) return ["same-slot", "name two different slots"];
      var empty = nums.filter(function (x) { return !(x >= 1 && x <= s.row.length) || s.row[x - 1] === null; });
      if (empty.length) return ["empty-slot", "slot " + empty[0] + " holds no card"];
    }
    if (w[0] === "vote" && w[1].indexOf(",") >= 0) {
      var ab = w[1].split(",").map(Number);
      if (holdsMap(s, player, "eldorado") === null) return ["no-map", "two cards need El Dorado, which you do not own"];
      if (ab[0] === ab[1]) return ["same-slot", "name two different cards"];
    }
    if (w[0] === "vote" || w[0] === "top" || w[0] === "discard") return ["no-such-card", "your hand has " + s.hands[player].length + " card(s)"];
    if (w[0] === "atlantis" && holdsMap(s, player, "atlantis") === null) return ["no-map", "you do not own Atlantis"];
    if (w[0] === "atlantis") return ["no-way", "Atlantis carries a pawn only from a ship to the other ship, if it has room"];
    if (w[0] === "place" && w[1] !== "tortuga") {
      var n = Number(w[2]);
      if (!(n >= 1 && n <= 5)) return ["no-way", "a ship has places 1 to 5"];
      return ["no-way", "place " + w[2] + " on that ship is taken"];
    }
    if (w[0] === "move") return ["no-way", "you cannot move there now"];
    if ((w[0] === "give" || w[0] === "fever") && w.length > 1 && w[1] === player) return ["not-allowed", "choose another player, not yourself"];
    if (w[0] === "maroon" && w.length > 1) {
      if (w[1] === player) return ["not-allowed", "a captain maroons a member of their crew, never themself"];
      return ["not-allowed", w[1] + " is not in your crew"];
    }
    return ["not-allowed", "not allowed now"];
  }

  // the legal options in one line: all of them when few, else grouped by their word (legal.describe)
  function describe(opts) {
    if (opts.length <= 12) return opts.join(", ");
    var order = [], groups = {};
    opts.forEach(function (o) {
      var word = o.split(" ")[0];
      if (!has(groups, word)) {
        groups[word] = [];
        order.push(word);
      }
      groups[word].push(o);
    });
    var parts = [];
    order.forEach(function (word) {
      var group = groups[word];
      if (word === "peek") {
        var seen = {}, slotsIn = [];
        group.forEach(function (o) {
          o.split(" ")[1].split(",").forEach(function (x) {
            var n = Number(x);
            if (!has(seen, n)) {
              seen[n] = true;
              slotsIn.push(n);
            }
          });
        });
        slotsIn.sort(function (a, b) { return a - b; });
        parts.push("peek any two of slots " + slotsIn.join(","));
      } else if (word === "force") {
        var players = [];
        group.forEach(function (o) {
          var who = o.split(" ")[1];
          if (players.indexOf(who) < 0) players.push(who);
        });
        parts.push("force PLAYER A,B (PLAYER: " + players.join(", ") + ")");
      } else {
        parts.push.apply(parts, group);
      }
    });
    return parts.join(", ");
  }

  // [kind, queue entry, canonical choice] of a legal choice; else throws a ChoiceError
  function validate(s, player, text) {
    if (s.players.indexOf(player) < 0) throw choiceError(quote(player) + " is not a player in this game (" + s.players.join(", ") + ")", "not-a-player");
    if (typeof text !== "string" || T.isBlank(text)) throw choiceError("empty choice; send the choice text, e.g. peek 1,2", "syntax");
    var o = owed(s), kind = null, entry = null;
    for (var i = 0; i < o.length; i++) {
      if (o[i][0] === player) {
        kind = o[i][1];
        entry = o[i][2];
        break;
      }
    }
    if (kind === null) {
      var waiting = owed(s).map(function (x) { return x[0] + " (" + x[1] + ")"; }).join(", ");
      throw choiceError("it is not " + player + "'s turn: " + player + " owes no choice now; waiting for " +
                        (waiting || "nobody: the game is over"), "not-your-turn");
    }
    if (kind === "action" && isRowOption(s, player, text)) return [kind, entry, text];
    var opts = options(s, player, kind, entry);
    if (opts.indexOf(text) >= 0) return [kind, entry, text];
    var word = firstWord(text);
    var wanted = word in KIND_OF_WORD ? KIND_OF_WORD[word] : null;
    if (kind === "loot" && word === "stow") wanted = "loot";
    if (kind === "action" && word === "atlantis") wanted = "action";
    if (wanted !== kind) {
      if (wanted !== null) throw choiceError(player + " owes a " + kind + " choice now, not " + word + "; legal: " + describe(opts), "not-your-turn");
      throw choiceError("not understood: " + quote(T.strip(text)) + "; " + SYNTAX[kind] + "; legal: " + describe(opts), "syntax");
    }
    var choice;
    try {
      choice = canonical(s, word, text, kind === "action" ? rowboatMoves(s, player) : []);
    } catch (e) {
      if (!(e instanceof P.ChoiceError)) throw e;
      throw choiceError(e.message + "; legal: " + describe(opts), e.code);
    }
    if (opts.indexOf(choice) < 0) {
      var why = whyIllegal(s, player, kind, choice);
      throw choiceError("illegal: " + choice + ": " + why[1] + "; legal: " + describe(opts), why[0]);
    }
    return [kind, entry, choice];
  }

  function check(s, player, text) {
    return validate(s, player, text)[2];
  }

  // the canonical form of a sealed choice's text without a state (pbem/games/tortuga1667 normalize)
  function normalize(kind, text) {
    var w = words(text);
    if (kind !== "vote") return w.join(" ");
    if (w.length === 2 && T.casefold(w[0]) === "vote" && T.isDecimal(w[1])) return "vote " + T.decimalValue(w[1]);
    if (w.length === 3 && T.casefold(w[0]) === "vote" && T.isDecimal(w[1]) && T.isDecimal(w[2]) &&
        T.decimalValue(w[1]) !== T.decimalValue(w[2])) {
      var a = T.decimalValue(w[1]), b = T.decimalValue(w[2]);
      return "vote " + Math.min(a, b) + "," + Math.max(a, b);
    }
    throw choiceError("not understood: " + quote(T.strip(text)) + "; " + SYNTAX.vote, "syntax");
  }

  // ------------------------------------------------------------------ applying a choice

  var HANDLERS = {
    stow: function (s, player, w, entry) {
      s.holds[entry.ship][w[1]] += 1;
      s.effects.push({type: "stow", player: player, ship: entry.ship, hold: w[1]});
    },
    action: function (s, player, w, entry, rng) {
      var verb = w[0];
      s.effects.push({type: "action", player: player, choice: w.join(" ")});
      if (verb === "peek") {
        var picked = w[1].split(",").map(Number);
        var cards = picked.map(function (x) { return s.row[x - 1]; });
        picked.forEach(function (x, i) { s.seen[player].push({card: cards[i], slot: x, turn: s.turn_no, shuffle: s.shuffles}); });
        s.effects.push({type: "peek", player: player, slots: picked,
          private: put({}, player, {cards: cards.map(function (c) { return s.events[c]; })})});
      } else if (verb === "reveal") {
        reveal(s, player, Number(w[1]) - 1, rng);
      } else if (verb === "force") {
        s.queue.unshift({kind: "pick", player: w[1], slots: w[2].split(",").map(Number), by: player});
      } else if (verb === "move") {
        doMove(s, player, w[1] !== "rowboat" ? w.slice(1) : ["rowboat", w[2]]);
      } else if (verb === "attack" || verb === "mutiny" || verb === "brawl") {
        callVote(s, verb, player, rng);
      } else if (verb === "maroon") {
        threaten(s, w[1], "captain", player);
      } else if (verb === "atlantis") {
        sail(s, player);
        s.queue.unshift({kind: "action", player: player});
      } else if (verb === "shift") {
        var ship = placeOf(s, player)[1];
        s.holds[ship][w[1]] -= 1;
        s.holds[ship][w[3]] += 1;
      }
    },
    pick: function (s, player, w, entry, rng) { reveal(s, player, Number(w[1]) - 1, rng); },
    loot: function (s, player, w) { doLoot(s, player, w); },
    shoot: function (s, player, w) {
      s.effects.push({type: "shot", player: player, target: w[1]});
      threaten(s, w[1], "pistol", player);
    },
    marque: function (s, player, w) {
      if (w[1] === "draw") {
        var card = pop0(s.vote_deck);
        s.hands[player] = s.hands[player].concat([card]);
        s.queue.unshift({kind: "top", player: player, drawn: card});
        s.effects.push({type: "marque-draw", player: player, private: put({}, player, {drew: voteFace(card)})});
      } else {
        boardShip(s, w[2], w[3], "marque");
      }
    },
    top: function (s, player, w) {
      var card = s.hands[player].splice(Number(w[1]) - 1, 1)[0];
      s.vote_deck.unshift(card);
      s.effects.push({type: "marque-top", player: player, private: put({}, player, {card: voteFace(card)})});
    },
    fever: function (s, player, w, entry, rng) { swapLoyalties(s, player, w[1], rng); },
    discard: function (s, player, w) {
      var card = s.hands[player].splice(Number(w[1]) - 1, 1)[0];
      s.vote_deck.push(card);
      s.effects.push({type: "discard", player: player, private: put({}, player, {card: voteFace(card)})});
    },
    give: function (s, player, w, entry) { give(s, player, w[1], entry.card); },
    fountain: function (s, player, w, entry) { answerFountain(s, player, w.join(" "), entry); },
    atlantis: function (s, player, w, entry, rng) {
      if (entry.why === "vote") afterAtlantis(s, player, w[1] === "go", rng);
      else answerAtlantisMaroon(s, player, w.join(" "), entry);
    },
    place: function (s, player, w, entry, rng) { place(s, player, w.slice(1), rng); },
  };

  function advance(s) {
    if (s.phase === "sudden") {
      var totals = teamTotals(s);
      if (totals.british !== totals.french) finish(s, totals.british > totals.french ? "british" : "french");
      else if (!s.queue.length && !slots(s).length) finish(s, "draw");
    }
    if (s.phase === "over" || s.queue.length) return;
    s.turn = (s.turn + 1) % s.players.length;
    s.turn_no += 1;
    s.queue.push({kind: "action", player: s.players[s.turn]});
  }

  function apply(state, player, text, rng) {
    var v = validate(state, player, text), kind = v[0], choice = v[2];
    var s = copyState(state);
    var w = choice.split(" ");
    if (kind === "vote") {
      s.effects.push({type: "voted", player: player});
      cast(s, player, w[1].split(",").map(function (x) { return Number(x) - 1; }), rng);
    } else {
      var entry = s.queue.shift();
      HANDLERS[kind](s, player, w, entry, rng);
    }
    advance(s);
    return s;
  }

  // ------------------------------------------------------------------ views and result

  function seenBy(s, player) {
    return s.seen[player].map(function (e) {
      var there = e.shuffle === s.shuffles && s.row[e.slot - 1] === e.card;
      return {card: s.events[e.card], slot: e.slot, turn: e.turn, still_there: there};
    });
  }

  function view(s, viewer) {
    if (viewer === undefined) viewer = null;
    var mapOf = function (o, f) {
      var out = {};
      for (var k in o) if (has(o, k)) put(out, k, f(o[k]));
      return out;
    };
    var data = {
      game: "tortuga1667",
      viewer: viewer,
      players: s.players.slice(),
      phase: s.phase,
      turn: s.players[s.turn],
      turn_no: s.turn_no,
      ships: {dutchman: s.ships.dutchman.slice(), jolly: s.ships.jolly.slice()},
      tortuga: s.tortuga.slice(),
      rowboats: clone(s.rowboats),
      rowboats_sunk: s.sunk,
      holds: clone(s.holds),
      galleon: s.galleon,
      tortuga_loose: s.loose,
      row: s.row.map(function (c, k) { return {slot: k + 1, card: c !== null ? "down" : null}; }),
      event_deck: s.event_deck.length,
      discard: s.discard.map(function (c) { return s.events[c]; }),
      removed: s.removed.map(function (c) { return s.events[c]; }),
      albatross: mapOf(s.albatross, function (cards) { return cards.length; }),
      maps: mapOf(s.maps, function (cards) { return cards.map(function (c) { return s.events[c]; }); }),
      variant: s.variant,
      hand_sizes: mapOf(s.hands, function (h) { return h.length; }),
      vote_deck: s.vote_deck.length,
      vote: null,
      last_vote: clone(s.last_vote),
      waiting: owed(s).map(function (x) { return x[0] + ":" + x[1]; }),
      effects: s.effects.map(function (effect) {
        var shown = {};
        for (var k in effect) if (has(effect, k) && k !== "private") shown[k] = clone(effect[k]);
        if (viewer !== null && has(effect, "private") && has(effect.private, viewer)) shown.private = clone(effect.private[viewer]);
        return shown;
      }),
    };
    if (s.slots !== null) data.placing = {slots: clone(s.slots), bag: s.bag.length};
    if (s.vote !== null) {
      data.vote = {kind: s.vote.kind, caller: s.vote.caller, ship: s.vote.ship, voters: s.vote.voters.slice()};
      data.vote.voted = s.vote.voters.filter(function (p) { return has(s.vote.cards, p); });
    }
    if (s.phase === "over") {
      data.loyalty = clone(s.loyalty);
      data.outcome = clone(s.outcome);
    }
    if (viewer !== null && s.players.indexOf(viewer) >= 0) {
      data.my_loyalty = s.loyalty[viewer];
      data.hand = s.hands[viewer].map(function (c, k) { return {n: k + 1, card: voteFace(c)}; });
      data.seen = seenBy(s, viewer);
      data.seen.forEach(function (e) { if (e.still_there) data.row[e.slot - 1].known = e.card; });
      if (s.vote !== null && has(s.vote.cards, viewer)) data.vote.mine = s.vote.cards[viewer].map(voteFace).join(" + ");
    }
    return data;
  }

  function headline(s) {
    return {round: s.turn_no, step: s.vote_no, phase: s.phase, start_player: null};
  }

  function result(s) {
    if (s.phase !== "over") return null;
    var totals = s.outcome.totals, winner = s.outcome.winner, scores = {};
    s.players.forEach(function (p) {
      var team = s.loyalty[p];
      var total = has(totals, team) ? totals[team] : team === "dutch" ? totals.british : 0;
      put(scores, p, {team: team, total: total});
    });
    var winners = s.players.filter(function (p) {
      return winner === "draw" ? s.loyalty[p] !== "dutch" : s.loyalty[p] === winner;
    });
    return {winner: winner, totals: clone(totals), loyalty: clone(s.loyalty), scores: scores, winners: winners};
  }

  P.games = P.games || {};
  P.games.tortuga1667 = {
    NAME: "tortuga1667", MIN_PLAYERS: MIN_PLAYERS, MAX_PLAYERS: MAX_PLAYERS, VARIANTS: VARIANTS,
    setup: setup, pending: pending, check: check, apply: apply, default: defaultChoice, view: view,
    result: result, headline: headline, normalize: normalize, checkPlayers: checkPlayers,
    voteFace: voteFace,
  };
})(globalThis.PBEM = globalThis.PBEM || {});

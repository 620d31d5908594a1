"use strict";
// Replays a draw tape of Tortuga 1667 games (tests/pages/js1667_corpus.py) with the page's
// JavaScript rules and compares every state, every request list and default, and at the
// sampled states the views, the headline, the result and the answers to probe choices.
//
//   node js1667_replay.js CORPUS.jsonl FILE.js...   (the page's scripts, in load order)
//
// Prints one JSON object: counts, coverage and the first mismatches (at most 3 per game).
// In a browser: load the page's scripts and this file, then js1667Replay(PBEM, games).

function js1667Replay(P, games) {
  const game = P.games.tortuga1667;

  function canon(v) {
    if (v === null || typeof v !== "object") return JSON.stringify(v);
    if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
    return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}";
  }

  class TapeRng {
    constructor(draws, where) {
      this.draws = draws;
      this.at = 0;
      this.where = where;
    }
    below(label, n) {
      const d = this.draws[this.at];
      if (!d) throw new Error(`${this.where}: draw ${this.at} (${label}, ${n}) is not on the tape`);
      if (d[0] !== label || d[1] !== n) {
        throw new Error(`${this.where}: draw ${this.at} is (${label}, ${n}), the tape has (${d[0]}, ${d[1]})`);
      }
      this.at += 1;
      return d[2];
    }
    done() {
      if (this.at !== this.draws.length) {
        throw new Error(`${this.where}: ${this.draws.length - this.at} draw(s) left on the tape, first ${JSON.stringify(this.draws[this.at])}`);
      }
    }
  }

  function answer(state, player, text) {
    try {
      return {ok: game.check(state, player, text)};
    } catch (e) {
      if (e instanceof P.ChoiceError) return {code: e.code};
      return {crash: String(e && e.stack || e)};
    }
  }

  function diffPath(a, b, path) {
    // the first path where two plain values differ, for the report
    if (canon(a) === canon(b)) return null;
    if (a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
      const keys = Array.from(new Set(Object.keys(a).concat(Object.keys(b)))).sort();
      for (const k of keys) {
        const d = diffPath(a[k], b[k], path + "." + k);
        if (d) return d;
      }
    }
    return {path, js: a === undefined ? "(missing)" : a, python: b === undefined ? "(missing)" : b};
  }

  const counts = {games: 0, moves: 0, states: 0, samples: 0, requests: 0, views: 0, probes: 0, draws: 0,
    players: {}, variants: {}, mismatched_games: 0};
  const mismatches = [];
  const coverage = {effects: {}, cards: {}, kinds: {}, codes: {}, winners: {}};
  const bump = (o, k) => { o[k] = (o[k] || 0) + 1; };

  function cover(state) {
    for (const e of state.effects) {
      bump(coverage.effects, e.type);
      if (e.type === "reveal") bump(coverage.cards, e.card);
    }
    if (state.queue.length) bump(coverage.kinds, state.queue[0].kind);
    if (state.outcome) bump(coverage.winners, state.outcome.winner);
  }

  function compareSample(g, at, state, s, bad) {
    counts.samples += 1;
    let d;
    for (const [who, pv] of Object.entries(s.views)) {
      const v = game.view(state, who === "" ? null : who);
      d = diffPath(v, pv, `view(${who || "public"})`);
      if (d) bad(at, "view", d);
      counts.views += 1;
    }
    d = diffPath(game.headline(state), s.headline, "headline");
    if (d) bad(at, "headline", d);
    d = diffPath(game.result(state), s.result, "result");
    if (d) bad(at, "result", d);
    for (const [player, text, py] of s.probes) {
      const js = answer(state, player, text);
      counts.probes += 1;
      bump(coverage.codes, py.code || "ok");
      if (canon(js) !== canon(py)) bad(at, "probe", {player, text, js, python: py});
    }
  }

  for (const g of games) {
    counts.games += 1;
    counts.players[g.players.length] = (counts.players[g.players.length] || 0) + 1;
    const variant = (g.options && g.options.variant) || "standard";
    counts.variants[variant] = (counts.variants[variant] || 0) + 1;
    let found = 0;
    const bad = (at, what, detail) => {
      if (found < 3) mismatches.push({game: g.index, at, what, detail});
      found += 1;
    };
    try {
      let rng, state;
      if (g.start) {
        state = JSON.parse(JSON.stringify(g.start));  // a rule case's prestate
      } else {
        rng = new TapeRng(g.setup_tape, `game ${g.index} setup`);
        state = game.setup(g.players, g.options, rng);
        rng.done();
        counts.draws += g.setup_tape.length;
      }
      let d2;
      for (let at = 0; ; at++) {
        counts.states += 1;
        const d = diffPath(state, g.states[at], "state");
        if (d) {
          bad(at, "state", d);
          break;
        }
        cover(state);
        const pend = game.pending(state);
        d2 = diffPath(pend, g.pending[at], "pending");
        if (d2) bad(at, "pending", d2);
        counts.requests += pend.length;
        const defaults = g.pending[at].map((r) => game.default(state, r.player, r.kind));
        d2 = diffPath(defaults, g.defaults[at], "defaults");
        if (d2) bad(at, "defaults", d2);
        if (g.samples[String(at)]) compareSample(g, at, state, g.samples[String(at)], bad);
        if (found) break;
        if (at === g.moves.length) {
          if (g.ended !== false && game.pending(state).length) bad(at, "end", "the JS still has pending requests");
          break;
        }
        const m = g.moves[at];
        const canonical = game.check(state, m.player, m.choice);
        if (canonical !== m.applied) {
          bad(at, "applied", {js: canonical, python: m.applied, typed: m.choice});
          break;
        }
        rng = new TapeRng(m.tape, `game ${g.index} move ${at + 1} (${m.player}: ${m.choice})`);
        const old = state, before = canon(state);
        state = game.apply(state, m.player, m.choice, rng);
        rng.done();
        counts.draws += m.tape.length;
        counts.moves += 1;
        // apply leaves the state it was given unchanged (the protocol keeps old states)
        if (canon(old) !== before) bad(at, "mutated", "apply changed the state it was given");
      }
    } catch (e) {
      bad(-1, "exception", String(e && e.stack || e));
    }
    if (found) counts.mismatched_games += 1;
  }

  return {counts, coverage, mismatches};
}

if (typeof module !== "undefined" && typeof require !== "undefined" && require.main === module) {
  const fs = require("fs");
  const vm = require("vm");
  const [corpus, ...scripts] = process.argv.slice(2);
  const context = vm.createContext({ TextEncoder, console, atob, btoa });
  for (const file of scripts) vm.runInContext(fs.readFileSync(file, "utf8"), context, {filename: file});
  const games = fs.readFileSync(corpus, "utf8").split("\n").filter((line) => line.trim()).map((line) => JSON.parse(line));
  process.stdout.write(JSON.stringify(js1667Replay(context.PBEM, games), null, 1) + "\n");
}

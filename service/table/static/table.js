// The web table: a game of Kashgar against the bots. The page holds the person's view, their
// decisions in words and an opaque token (the whole game, encrypted by the service); every
// decision goes to POST /table/move with the token and comes back with the next ones.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const pauseMs = Number(document.body.dataset.pauseMs || 0);
  const RESOURCES = ["ginger", "cloves", "pepper", "anise", "cinnamon", "gold", "mules"];
  const state = { levels: [], defaultLevel: null, elo: null, token: null, body: null, busy: false, review: null,
    recordBody: null, recordMoves: 0, final: null, showing: null, rating: null };
  // the person's finished games, kept in this browser only (never on the server)
  const GAMES_KEY = "kashgarTableGames";

  // what the script holds, for a look from outside (the browser tests read it)
  window.kashgarTable = { snapshot: () => JSON.parse(JSON.stringify(state)) };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else if (k === "text") node.textContent = v; else node.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  // numbers as people read them: a chance in whole percent, VP to one decimal
  const pct = (p) => (typeof p === "number" ? `${Math.round(p * 100)}%` : "?");
  const vp = (v) => (typeof v === "number" ? v.toFixed(1) : "?");

  // A server with API keys asks for one (401/403): the person types it once, the tab keeps it.
  function authHeaders() {
    const key = ($("api-key").value || sessionStorage.getItem("kashgarKey") || "").trim();
    if (key) sessionStorage.setItem("kashgarKey", key);
    return key ? { Authorization: `Bearer ${key}` } : {};
  }
  function needKey(resp) {
    if (resp.status === 401 || resp.status === 403) {
      $("api-key-row").hidden = false;
      sessionStorage.removeItem("kashgarKey");
    }
  }

  // A JavaScript number is a double: an integer from 2**53 on is not kept exactly. What the page
  // reads keeps such a number as the digits the service wrote (a string, where the browser gives
  // JSON.parse the source text), and a game record goes back to the service as the text the
  // service wrote, never parsed and written again: its seed (another tool's record may hold one
  // up to 2**63) names its deal exactly.
  const parse = (text) => JSON.parse(text, (key, value, context) =>
    (Number.isInteger(value) && !Number.isSafeInteger(value) && context && typeof context.source === "string"
      ? context.source : value));
  // the text of a JSON object with `fields` added (the object's own text kept as it is)
  function withFields(objectText, fields) {
    const text = objectText.trim();
    const extra = JSON.stringify(fields).slice(1, -1);
    if (!extra) return text;
    return /^\{\s*\}$/.test(text) ? `{${extra}}` : `${text.slice(0, -1)},${extra}}`;
  }
  // the record's text in an answer of POST /table/record (`{"record": ...}`)
  function recordText(answerText) {
    const m = /^\s*\{\s*"record"\s*:\s*([\s\S]*)\}\s*$/.exec(answerText);
    if (!m) throw new Error("the answer holds no record");
    return m[1].trim();
  }
  // JSON text laid out one value a line, its numbers and strings as they were written
  function indented(text) {
    let out = "", depth = 0, quoted = false;
    const pad = () => `\n${" ".repeat(depth)}`;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quoted) {
        out += c;
        if (c === "\\") out += text[++i]; else if (c === '"') quoted = false;
      } else if (c === '"') { quoted = true; out += c; }
      else if ((c === "{" || c === "[") && (text[i + 1] === "}" || text[i + 1] === "]")) { out += c + text[++i]; }
      else if (c === "{" || c === "[") { depth++; out += c + pad(); }
      else if (c === "}" || c === "]") { depth--; out += pad() + c; }
      else if (c === ",") out += `,${pad()}`;
      else if (c === ":") out += ": ";
      else if (!/\s/.test(c)) out += c;
    }
    return `${out}\n`;
  }

  async function read(resp) {
    needKey(resp);
    const raw = await resp.text();
    let data = {};
    try { data = parse(raw); } catch (e) { data = {}; }
    if (!resp.ok) throw new Error(data.message ? `${data.message}${data.pointer ? ` (${data.pointer})` : ""}` : `HTTP ${resp.status}`);
    return { data, raw, resp };
  }

  const get = async (path) => (await read(await fetch(path, { headers: authHeaders() }))).data;

  // POST a body given as JSON text; the answer parsed, its text and the response
  async function send(path, bodyText) {
    return read(await fetch(path, {
      method: "POST", headers: { "Content-Type": "application/json", ...authHeaders() }, body: bodyText,
    }));
  }
  const call = async (path, body) => (await send(path, JSON.stringify(body))).data;

  // ---- setup -----------------------------------------------------------------------------
  // a level's name with its measured Elo beside it
  const levelLabel = (lv) => (typeof lv.elo === "number" ? `${lv.name} (Elo ${Math.round(lv.elo)})` : lv.name);

  function levelSelect(id, chosen) {
    const sel = el("select", { id });
    for (const lv of state.levels) {
      const opt = el("option", { value: lv.name, text: levelLabel(lv) });
      if (lv.name === chosen) opt.selected = true;
      sel.append(opt);
    }
    return sel;
  }
  const describe = (name) => (state.levels.find((l) => l.name === name) || {}).description || "";

  // A bot at any Elo of the ladder (GET /levels' `elo` range): the choice "Elo..." after the
  // levels, its number beside it; a new game sends the number, the table seats it as `elo:N`.
  const ELO_CHOICE = "elo:";  // no level's name holds a colon
  const ELO_SEAT = /^elo:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
  const eloSeat = (lv) => typeof lv === "string" && ELO_SEAT.test(lv) && Number.isFinite(Number(lv.slice(4)));
  const clampElo = (x) => Math.min(state.elo.max, Math.max(state.elo.min, x));
  const eloMiddle = () => clampElo(Math.round((state.elo.min + state.elo.max) / 2));
  const eloAbout = () => `Any strength from Elo ${state.elo.min} to ${state.elo.max}: each decision is searched by `
    + "one of the two levels around it, the nearer one more often.";

  function drawBotLevels() {
    const box = $("bot-levels");
    const kept = [...box.querySelectorAll("select")].map((s) => s.value);
    const keptElo = [...box.querySelectorAll("input.bot-elo")].map((e) => e.value);
    box.replaceChildren();
    const n = Number($("bots").value);
    for (let i = 0; i < n; i++) {
      const sel = levelSelect(`level-${i}`, kept[i] || "novice");
      const about = el("p", { class: "about", id: `level-${i}-about` });
      sel.setAttribute("aria-describedby", about.id);
      let elo = null, eloLabel = null;
      if (state.elo) {
        sel.append(el("option", { value: ELO_CHOICE, text: "Elo\u2026" }));
        if (kept[i] === ELO_CHOICE) sel.value = ELO_CHOICE;
        elo = el("input", { type: "number", id: `level-${i}-elo`, class: "bot-elo", min: String(state.elo.min),
          max: String(state.elo.max), step: "any", inputmode: "decimal", "aria-describedby": about.id });
        elo.value = keptElo[i] || String(eloMiddle());
        eloLabel = el("label", { class: "bot-elo-label" }, "Elo ", elo);
      }
      // the number shown (and sent) only while "Elo..." is chosen: a hidden one is disabled, never checked
      const show = () => {
        const on = sel.value === ELO_CHOICE;
        if (elo) { eloLabel.hidden = !on; elo.disabled = !on; }
        about.textContent = on ? eloAbout() : describe(sel.value);
      };
      sel.addEventListener("change", show);
      show();
      box.append(el("div", { class: "bot-level" }, el("label", {}, `Bot ${i + 1} (seat ${i + 2}) level `, sel), eloLabel,
        about));
    }
  }

  async function loadLevels() {
    const resp = await fetch("/levels", { headers: authHeaders() });
    needKey(resp);
    if (!resp.ok) throw new Error(resp.status === 401 || resp.status === 403 ? "this server needs an API key" : `HTTP ${resp.status}`);
    const data = await resp.json();
    state.levels = data.levels || [];
    state.defaultLevel = data.default;
    state.elo = data.elo && typeof data.elo.min === "number" && typeof data.elo.max === "number" ? data.elo : null;
    drawBotLevels();
    // a hint is answered at once: only the levels searched synchronously, the default if it is one, else the strongest
    const sync = state.levels.filter((lv) => !lv.asynchronous);
    const hintDefault = sync.some((lv) => lv.name === state.defaultLevel) ? state.defaultLevel : (sync.length ? sync[sync.length - 1].name : null);
    const hintSel = levelSelect("hint-level-select", hintDefault);
    $("hint-level").replaceChildren(...[...hintSel.children].filter((o) => sync.some((lv) => lv.name === o.value)));
    if (hintDefault) $("hint-level").value = hintDefault;
    await refreshRating();
  }

  async function start(ev) {
    ev.preventDefault();
    $("setup-error").textContent = "";
    if (!state.levels.length) {
      try { await loadLevels(); } catch (e) { $("setup-error").textContent = `Could not read the levels: ${e.message}`; return; }
    }
    const levels = [];
    for (const [i, sel] of [...$("bot-levels").querySelectorAll("select")].entries()) {
      if (sel.value !== ELO_CHOICE) { levels.push(sel.value); continue; }
      const text = $(`level-${i}-elo`).value.trim();
      const elo = text === "" ? NaN : Number(text);
      if (!Number.isFinite(elo) || elo < state.elo.min || elo > state.elo.max) {
        $("setup-error").textContent = `Bot ${i + 1}'s Elo is a number from ${state.elo.min} to ${state.elo.max}.`;
        return;
      }
      levels.push(elo);
    }
    const body = { levels };
    if ($("variant").value === "all") body.variant = "all";
    const seed = $("seed").value.trim();
    if (seed !== "") {
      // below 2**53: the number stays exact in the page, and in the record it reads back
      if (!/^[0-9]+$/.test(seed) || !Number.isSafeInteger(Number(seed))) {
        $("setup-error").textContent = `The seed is a whole number from 0 to ${Number.MAX_SAFE_INTEGER} (or empty: random).`;
        return;
      }
      body.seed = Number(seed);
    }
    await begin("/table/new", JSON.stringify(body), $("setup-error"));
  }

  // the table as a new game finds it: no review, no position shown, no error of the last game
  function clearTable() {
    state.token = null; state.body = null; state.final = null; state.review = null; state.showing = null;
    state.recordBody = null; state.recordMoves = 0;
    for (const id of ["review-summary", "review-graph", "review-moves", "review-detail", "review-progress",
      "log", "hint-out", "position-note"]) $(id).replaceChildren();
    for (const box of document.querySelectorAll(".error")) box.textContent = "";
    $("position-note").hidden = true;
    $("review").hidden = true;
  }

  async function begin(path, bodyText, errorBox) {
    try {
      const { data } = await send(path, bodyText);
      clearTable();
      $("setup").hidden = true;
      $("table").hidden = false;
      await take(data);
    } catch (e) {
      errorBox.textContent = `Could not start: ${e.message}`;
    }
  }

  function loadRecord(ev) {
    const file = ev.target.files[0];
    if (!file) return;
    $("setup-error").textContent = "";
    file.text().then((text) => {
      let doc;
      try { doc = JSON.parse(text); } catch (e) { $("setup-error").textContent = "That file is not JSON."; return; }
      // a record, or POST /table/record's answer holding one: sent as the file writes it
      const answer = doc && typeof doc === "object" && doc.record && typeof doc.record === "object" && !("schema" in doc);
      begin("/table/load", answer ? text : `{"record":${text}}`, $("setup-error"));
    });
    ev.target.value = "";
  }

  // ---- a turn ----------------------------------------------------------------------------
  async function take(data) {
    state.token = data.token;
    state.busy = true;
    setBusy(true);
    const me = data.seat;
    for (const step of data.steps) {
      logStep(step);
      if (step.seat !== me && pauseMs > 0) await sleep(pauseMs);
    }
    state.body = data;
    state.busy = false;
    render(data);
  }

  async function decide(item) {
    if (state.busy) return;
    state.busy = true;
    setBusy(true);
    $("table-error").textContent = "";
    $("hint-out").replaceChildren();
    $("ask").textContent = "The bots are playing...";
    let data;
    try {
      data = await call("/table/move", { token: state.token, decision: item.text });
      await take(data);
    } catch (e) {
      state.busy = false;
      setBusy(false);
      $("ask").textContent = state.body ? state.body.ask : "";
      $("table-error").textContent = `Not played: ${e.message}`;
      return;
    }
    if (data.result) {  // a game played here to its end: kept for the person's rating
      keepGame(data);
      await refreshRating();
    }
  }

  // ---- the person's rating ---------------------------------------------------------------
  // Each game finished at this table is kept in localStorage (the seats' levels, VP, winner);
  // POST /rating rates them on the server's ladder. Nothing of it is sent anywhere else.
  function storedGames() {
    try {
      const games = JSON.parse(localStorage.getItem(GAMES_KEY) || "[]");
      return Array.isArray(games) ? games : [];
    } catch (e) { return []; }
  }

  function keepGame(data) {
    const games = storedGames();
    games.push({ levels: data.levels, vp: data.result.scores, winner: data.result.winner, seed: data.result.seed,
      at: new Date().toISOString() });
    try { localStorage.setItem(GAMES_KEY, JSON.stringify(games.slice(-500))); } catch (e) { /* storage full or off */ }
  }

  // the stored games this server's ladder can rate (every bot's level one with an Elo, or a bot
  // at an Elo: `elo:640`)
  function ratedGames() {
    const rated = new Set(state.levels.filter((lv) => typeof lv.elo === "number").map((lv) => lv.name));
    return storedGames().filter((g) => Array.isArray(g.levels) && Array.isArray(g.vp)
      && g.levels.filter((lv) => lv === null).length === 1
      && g.levels.every((lv) => lv === null || rated.has(lv) || eloSeat(lv)))
      .map((g) => ({ levels: g.levels, vp: g.vp, ...(Number.isInteger(g.winner) ? { winner: g.winner } : {}) }));
  }

  const ratingText = (r) => `Your rating ${r.elo} [${r.interval[0]}, ${r.interval[1]}] after ${r.games} game${r.games === 1 ? "" : "s"}`;

  async function refreshRating() {
    const results = ratedGames();
    state.rating = null;
    if (results.length) {
      try { state.rating = await call("/rating", { results }); } catch (e) { state.rating = null; }
    }
    showRating();
  }

  function showRating() {
    const r = state.rating;
    for (const line of document.querySelectorAll(".rating-line")) line.textContent = r ? ratingText(r) : "";
    $("rating").hidden = !r;
    $("result-rating").hidden = !r || $("result").hidden;
    if (r) {
      const lv = state.levels.find((l) => l.name === r.nearest_level);
      const elo = ratingElo();
      $("at-my-rating").textContent = `Opponents at my rating: ${elo !== null ? `Elo ${elo}`
        : lv ? levelLabel(lv) : r.nearest_level}`;
    }
  }

  // the person's rating as a bot's Elo (within the ladder's range); null on a ladder with no range
  const ratingElo = () => (state.rating && state.elo && typeof state.rating.elo === "number"
    ? clampElo(state.rating.elo) : null);

  // every bot set to play at the person's rating (on a ladder with no range: the level nearest it)
  function atMyRating() {
    if (!state.rating) return;
    const elo = ratingElo();
    for (const [i, sel] of [...$("bot-levels").querySelectorAll("select")].entries()) {
      if (elo === null) {
        sel.value = state.rating.nearest_level;
      } else {
        sel.value = ELO_CHOICE;
        $(`level-${i}-elo`).value = String(elo);
      }
      sel.dispatchEvent(new Event("change"));
    }
  }

  function forgetGames() {
    localStorage.removeItem(GAMES_KEY);
    state.rating = null;
    showRating();
  }

  async function hint() {
    if (state.busy || !state.token) return;
    const out = $("hint-out");
    out.replaceChildren(el("p", { text: "Thinking..." }));
    try {
      const h = await call("/table/hint", { token: state.token, level: $("hint-level").value });
      const alts = el("ul", {});
      for (const a of h.alternatives) alts.append(el("li", { text: `${a.description}: win chance ${pct(a.win_prob)}` }));
      out.replaceChildren(
        el("p", { class: "hint" }, el("strong", { text: `${h.level} suggests: ` }), `${h.description}`,
          ` (win chance ${pct(h.win_prob)})`),
        h.reason ? el("p", { class: "reason", text: `Why: ${h.reason}` }) : null,
        h.alternatives.length ? el("p", { text: "Next best:" }) : null,
        h.alternatives.length ? alts : null,
      );
    } catch (e) {
      out.replaceChildren(el("p", { class: "error", text: `No hint: ${e.message}` }));
    }
  }

  // the finished game's record: the answer of POST /table/record, as text (kept for the review)
  async function finalRecord() {
    if (!state.recordBody) {
      const { data, raw } = await send("/table/record", JSON.stringify({ token: state.final.token }));
      state.recordBody = raw;
      state.recordMoves = data.record.moves.length;
    }
    return state.recordBody;
  }

  async function download() {
    try {
      const text = recordText(await finalRecord());
      const blob = new Blob([indented(text)], { type: "application/json" });
      const a = el("a", { href: URL.createObjectURL(blob), download: `kashgar-game-${state.final.result.seed}.json` });
      document.body.append(a);
      a.click();
      a.remove();
    } catch (e) {
      $("table-error").textContent = `No record: ${e.message}`;
    }
  }

  function setBusy(busy) {
    for (const b of $("decisions").querySelectorAll("button")) b.disabled = busy;
    $("hint").disabled = busy;
  }

  // ---- drawing ---------------------------------------------------------------------------
  function logStep(step) {
    const li = el("li", { class: step.who === "you" ? "mine" : "bot" },
      el("strong", { text: `${step.who}: ` }), step.description);
    if (step.events.length) {
      const ev = el("ul", { class: "events" });
      for (const e of step.events) ev.append(el("li", { text: e }));
      li.append(ev);
    }
    const log = $("log");
    log.prepend(li);
    while (log.children.length > 200) log.lastChild.remove();
  }

  const cardName = (data, slug) => (data.cards[slug] || {}).name || slug;

  function cardItem(data, slug, front) {
    const info = data.cards[slug] || { name: slug, actions: {} };
    const acts = el("ul", { class: "actions" });
    const label = { a: "Action 1", b: "Action 2", part: "Parting" };
    for (const [k, v] of Object.entries(info.actions || {})) acts.append(el("li", {}, el("em", { text: `${label[k] || k}: ` }), v));
    return el("li", { class: front ? "card front" : "card" },
      el("span", { class: "name", text: info.name }), info.vp ? el("span", { class: "vp", text: ` ${info.vp} VP` }) : null, acts);
  }

  function resources(seat) {
    const ul = el("ul", { class: "resources" });
    for (const r of RESOURCES) ul.append(el("li", {}, el("span", { class: "rname", text: r }), ` ${seat.resources[r] ?? 0}`));
    return ul;
  }

  const amount = (n, what) => `${n} ${what === "mules" && n === 1 ? "mule" : what}`;

  function contractItem(data, number) {
    const c = data.contracts[String(number)] || { number, cost: {}, payout: {} };
    const cost = Object.entries(c.cost || {}).map(([k, v]) => amount(v, k)).join(", ") || "nothing";
    const pays = Object.entries(c.payout || {}).map(([k, v]) => amount(v, k)).join(", ");
    return el("li", { class: "contract", title: c.text || "" }, el("strong", { text: `#${c.number} · ${c.vp} VP` }),
      el("span", { class: "line", text: `costs ${cost}` }),
      el("span", { class: "line", text: `needs ${amount(c.mules, "mules")}` }),
      pays ? el("span", { class: "line", text: `pays ${pays}` }) : null);
  }

  function caravans(data, seat, full) {
    const box = el("div", { class: "caravans" });
    seat.caravans.forEach((cards, i) => {
      const list = el(full ? "ol" : "ul", { class: "caravan" });
      cards.forEach((slug, k) => list.append(full ? cardItem(data, slug, k === 0)
        : el("li", { class: k === 0 ? "card front" : "card", text: cardName(data, slug) })));
      box.append(el("div", { class: "caravan-box" }, el("h3", { text: `Caravan ${i + 1}` }), list));
    });
    return box;
  }

  function render(data) {
    const view = data.view;
    const me = data.seat;
    const names = data.names;
    const scores = names.map((n, i) => `${n} ${data.vp[i]} VP`).join(" · ");
    const who = data.is_terminal ? "The game is over" : `${names[data.current_player]} to decide`;
    $("status").replaceChildren(el("p", {}, el("strong", { text: `Turn ${view.turn + 1}: ${who}. ` }), scores));

    const seat = view.seats[me];
    const mine = el("ul", { class: "contracts" });
    for (const n of seat.contracts) mine.append(contractItem(data, n));
    $("you").replaceChildren(el("p", { text: `${data.vp[me]} VP` }), resources(seat), caravans(data, seat, true),
      el("h3", { text: "Your contracts" }), seat.contracts.length ? mine : el("p", { text: "none yet" }));

    const display = el("ul", { class: "contracts" });
    for (const n of view.display) display.append(contractItem(data, n));
    $("display").replaceChildren(display);

    const others = [];
    view.seats.forEach((s, i) => {
      if (i === me) return;
      const done = el("ul", { class: "contracts" });
      for (const n of s.contracts) done.append(contractItem(data, n));
      others.push(el("div", { class: "seat" }, el("h3", { text: `${names[i]}: ${data.vp[i]} VP` }), resources(s),
        caravans(data, s, false), s.contracts.length ? el("h3", { text: "Contracts" }) : null,
        s.contracts.length ? done : null));
    });
    $("others").replaceChildren(...others);

    const d = view.decks;
    const discard = view.discard.map((slug) => cardName(data, slug));
    $("piles").replaceChildren(el("p", { text: `Standard deck ${d.standard.count} cards · Special deck ${d.special.count} cards · Contract deck ${d.contract.count} contracts` }),
      el("p", { text: `Discard pile (${discard.length}): ${discard.join(", ") || "empty"}` }));

    $("ask").textContent = data.is_terminal ? "Game over" : data.ask;
    const buttons = data.legal.map((item) => {
      const b = el("button", { type: "button", class: "decision", "data-text": item.text }, el("span", { text: item.description }),
        el("code", { text: item.text }));
      b.addEventListener("click", () => decide(item));
      return b;
    });
    $("decisions").replaceChildren(...buttons);
    $("decide").classList.remove("look");  // a position from the review marks it again
    $("position-note").hidden = true;
    $("hint").disabled = data.is_terminal;
    document.querySelector(".hint-bar").hidden = data.is_terminal;

    const result = $("result");
    $("review").hidden = !data.result && state.showing === null;
    if (data.result) {
      state.final = data;
      if (!$("review-level").options.length) $("review-level").replaceWith(levelSelect("review-level", "master"));
      const r = data.result;
      const line = names.map((n, i) => `${n}: ${r.scores[i]} VP`).join(", ");
      const dl = el("button", { type: "button", id: "download" }, "Download the game record");
      dl.addEventListener("click", download);
      result.replaceChildren(el("h2", { text: r.winner === me ? "You win!" : `${r.winner_name} wins` }),
        el("p", { class: "scores", text: `Scores: ${line}` }), el("p", { class: "seed", text: `Seed: ${r.seed}` }), dl);
      result.hidden = false;
      dl.focus();
    } else {
      result.hidden = true;
    }
    $("result-rating").hidden = result.hidden || !state.rating;
    if (!data.result) {
      if (buttons.length) buttons[0].focus({ preventScroll: true });
    }
  }


  // ---- the review ------------------------------------------------------------------------
  // POST /reviews with the game's record, the job followed to its end; a win-chance graph per
  // seat (SVG drawn here, its moves numbered), the lost chances marked on it (a class by its
  // shape, size and outline) and listed. A click on a mark or a line says the move in words beside
  // the graph and, for the person's own decisions, brings the position as they saw it into view,
  // the move played and the better one marked among its decisions.
  const CLASSES = { inaccuracy: "?!", mistake: "?", blunder: "??" };
  const COLOURS = ["#1f6feb", "#c2410c", "#15803d", "#7c3aed"];
  const seatName = (i) => (state.final && state.final.names ? state.final.names[i] : `seat ${i + 1}`);
  const NS = "http://www.w3.org/2000/svg";
  const svg = (tag, attrs) => {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    return node;
  };

  // a lost chance's mark at (cx, cy): a small circle, a larger square, a larger triangle
  function mark(cls, cx, cy) {
    const node = cls === "inaccuracy" ? svg("circle", { cx, cy, r: 4.5 })
      : cls === "mistake" ? svg("rect", { x: cx - 6, y: cy - 6, width: 12, height: 12 })
        : svg("polygon", { points: `${cx},${cy - 10} ${cx + 9},${cy + 6} ${cx - 9},${cy + 6}` });
    node.setAttribute("class", `marker ${cls}`);
    return node;
  }

  async function startReview() {
    $("review-error").textContent = "";
    $("review-start").disabled = true;
    $("review-progress").textContent = "Sending the game...";
    try {
      const { data: accepted, resp } = await send("/reviews", withFields(await finalRecord(), { level: $("review-level").value }));
      const url = resp.headers.get("Location") || accepted.status_url;
      let job;
      for (;;) {
        job = await get(url);
        const p = job.progress || {};
        $("review-progress").textContent = `Reviewed ${p.decisions_done || 0} of ${p.decisions_total || "?"} decisions...`;
        if (job.status === "finished" && job.result) break;
        if (job.status === "failed" || job.status === "cancelled") throw new Error(job.error || job.status);
        await sleep(400);
      }
      state.review = job.result;
      $("review-progress").textContent = `Reviewed ${job.result.reviewed} decisions at ${job.result.level}.`;
      drawReview(job.result);
    } catch (e) {
      $("review-progress").textContent = "";
      $("review-error").textContent = `No review: ${e.message}`;
    } finally {
      $("review-start").disabled = false;
    }
  }

  function drawReview(r) {
    const table = el("table", { class: "review-seats" },
      el("tr", {}, ...["", "accuracy", "mean loss", "inaccuracies", "mistakes", "blunders"].map((h) => el("th", { text: h }))));
    for (const s of r.seats) {
      table.append(el("tr", {}, el("th", { text: seatName(s.seat) }),
        el("td", { text: s.accuracy === null ? "-" : s.accuracy.toFixed(1) }),
        el("td", { text: s.mean_loss === null ? "-" : `${(100 * s.mean_loss).toFixed(1)}%` }),
        el("td", { text: String(s.inaccuracy) }), el("td", { text: String(s.mistake) }),
        el("td", { text: String(s.blunder) })));
    }
    $("review-summary").replaceChildren(table);
    $("review-graph").replaceChildren(graph(r));
    $("review-detail").replaceChildren();
    const items = r.decisions.filter((d) => d.class).map((d) => {
      const b = el("button", { type: "button", class: `review-move ${d.class}`, "data-move": String(d.move) },
        `Move ${d.move}, ${seatName(d.seat)} ${CLASSES[d.class]} ${d.class}: ${d.played_words} (${pct(d.played_win_prob)}); `
        + `better: ${d.best_words} (${pct(d.best_win_prob)})`);
      b.addEventListener("click", () => showDecision(d));
      return el("li", {}, b);
    });
    $("review-moves").replaceChildren(...(items.length ? items : [el("li", { text: "No chance lost beyond the search's own noise." })]));
  }

  function graph(r) {
    const W = 640, H = 240, L = 36, R = 12, B = 36, T = 12;
    const last = Math.max(1, state.recordMoves, ...r.decisions.map((d) => d.move));
    const x = (m) => L + ((W - L - R) * (m - 1)) / Math.max(1, last - 1);
    const y = (p) => T + (H - T - B) * (1 - p);
    const text = (attrs, words) => { const t = svg("text", attrs); t.textContent = words; return t; };
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", id: "review-svg",
      "aria-label": "Each seat's win chance across the game, move by move, with its lost chances marked" });
    for (const p of [0, 0.5, 1]) {
      root.append(svg("line", { x1: L, x2: W - R, y1: y(p), y2: y(p), class: "grid" }));
      root.append(text({ x: 2, y: y(p) + 4, class: "axis" }, pct(p)));
    }
    // the moves axis: move 1, then every `step` moves (about ten numbers at most)
    const step = [1, 2, 5, 10, 20, 25, 50, 100, 200, 500].find((n) => last / n <= 10) || 1000;
    const ticks = [1];
    for (let m = step; m <= last; m += step) if (m - 1 >= step / 2) ticks.push(m);
    for (const m of ticks) {
      root.append(svg("line", { x1: x(m), x2: x(m), y1: H - B, y2: H - B + 4, class: "tick" }));
      root.append(text({ x: x(m), y: H - B + 16, class: "axis move-number", "text-anchor": "middle" }, String(m)));
    }
    root.append(text({ x: (L + W - R) / 2, y: H - 3, class: "axis", "text-anchor": "middle" }, "move"));
    const seats = [...new Set(r.decisions.map((d) => d.seat))].sort();
    for (const seat of seats) {
      const mine = r.decisions.filter((d) => d.seat === seat);
      const chance = (d) => (typeof d.played_win_prob === "number" ? d.played_win_prob : d.best_win_prob);
      const pts = mine.filter((d) => typeof chance(d) === "number").map((d) => `${x(d.move).toFixed(1)},${y(chance(d)).toFixed(1)}`);
      root.append(svg("polyline", { points: pts.join(" "), class: "chance", stroke: COLOURS[seat % 4], "data-seat": seat }));
      for (const d of mine.filter((d) => d.class && typeof chance(d) === "number")) {
        const dot = mark(d.class, x(d.move), y(chance(d)));
        for (const [k, v] of Object.entries({ fill: COLOURS[seat % 4], "data-move": d.move, "data-seat": seat, tabindex: 0, role: "button" })) {
          dot.setAttribute(k, String(v));
        }
        const tip = svg("title", {});
        tip.textContent = `Move ${d.move}, ${seatName(seat)}: ${d.class} ${CLASSES[d.class]}`;
        dot.append(tip);
        dot.addEventListener("click", () => showDecision(d));
        dot.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); showDecision(d); } });
        root.append(dot);
      }
    }
    const seatsLegend = el("p", { class: "legend" }, ...seats.map((s) => el("span", { style: `color:${COLOURS[s % 4]}`, text: `● ${seatName(s)} ` })));
    const classLegend = el("p", { class: "legend classes" }, ...Object.keys(CLASSES).map((c) => {
      const icon = svg("svg", { width: 22, height: 22, viewBox: "0 0 22 22", "aria-hidden": "true" });
      icon.append(mark(c, 11, 12));
      return el("span", { class: `legend-${c}` }, icon, ` ${c} ${CLASSES[c]}`);
    }));
    return el("figure", {}, root, seatsLegend, classLegend);
  }

  // the mark and the line of move `move` shown as chosen
  function choose(move) {
    for (const node of document.querySelectorAll("#review .chosen")) node.classList.remove("chosen");
    for (const node of document.querySelectorAll(`#review [data-move="${move}"]`)) node.classList.add("chosen");
  }

  // the decisions of a position shown from the review: the one played and the better one marked
  function markDecisions(d) {
    for (const b of $("decisions").querySelectorAll("button.decision")) {
      const marks = [];
      if (b.dataset.text === d.played) marks.push(["played", "played"]);
      if (b.dataset.text === d.best) marks.push(["better", "better"]);
      for (const [cls, label] of marks.reverse()) {
        b.classList.add(cls);
        b.prepend(el("span", { class: `mark ${cls}`, text: label }));
      }
    }
  }

  async function showDecision(d) {
    const words = () => el("p", { class: "review-words" },
      el("strong", { text: `Move ${d.move}, ${seatName(d.seat)}${d.class ? ` (${d.class} ${CLASSES[d.class]})` : ""}: ` }),
      `played ${d.played_words} (win chance ${pct(d.played_win_prob)}, ${vp(d.played_expected_vp)} VP expected); `,
      `better: ${d.best_words} (win chance ${pct(d.best_win_prob)}, ${vp(d.best_expected_vp)} VP expected).`);
    $("review-error").textContent = "";
    $("review-detail").replaceChildren(words(), d.reason ? el("p", { class: "reason", text: `Why: ${d.reason}` }) : "");
    choose(d.move);
    state.showing = d.move;
    if (!state.final || d.seat !== state.final.seat) {  // the person's own decisions show their position
      $("review-detail").scrollIntoView({ block: "nearest" });
      return;
    }
    try {
      const { data } = await send("/table/load", withFields(await finalRecord(), { moves: d.move - 1 }));
      if (state.showing !== d.move) return;  // another move was chosen meanwhile
      state.token = data.token;
      render(data);
      for (const b of $("decisions").querySelectorAll("button")) b.disabled = true;  // a look, not a new game
      document.querySelector(".hint-bar").hidden = true;
      $("ask").textContent = `Move ${d.move}: the position as you saw it`;
      markDecisions(d);
      const back = el("button", { type: "button", id: "review-back" }, "Back to the end of the game");
      back.addEventListener("click", backToEnd);
      $("position-note").replaceChildren(words(), back);
      $("position-note").hidden = false;
      $("decide").classList.add("look");
      $("review").hidden = false;
      $("decide").scrollIntoView({ block: "start" });
    } catch (e) {
      $("review-error").textContent = `No position: ${e.message}`;
    }
  }

  function backToEnd() {
    if (!state.final) return;
    state.token = state.final.token;
    state.showing = null;
    render(state.final);
    $("review-detail").replaceChildren();
    $("review-graph").scrollIntoView({ block: "start" });
  }

  // ---- wiring ----------------------------------------------------------------------------
  $("bots").addEventListener("change", drawBotLevels);
  $("setup-form").addEventListener("submit", start);
  $("load-record").addEventListener("change", loadRecord);
  $("hint").addEventListener("click", hint);
  $("at-my-rating").addEventListener("click", atMyRating);
  $("forget-games").addEventListener("click", forgetGames);
  $("review-start").addEventListener("click", startReview);
  $("again").addEventListener("click", () => {
    clearTable();
    $("table").hidden = true; $("setup").hidden = false; $("start").focus();
  });
  loadLevels().catch((e) => { $("setup-error").textContent = `Could not read the levels: ${e.message}`; });
})();

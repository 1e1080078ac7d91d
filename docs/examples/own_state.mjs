// Send your own game's state: a program that keeps its game in its own shape writes the state
// document the API reads (kashgar/state@1: engine_ext/data/state.schema.json, docs/integrate.md),
// here a seat's view in the middle of a turn, and asks POST /legal and POST /suggest about it.
// Node 18+ (built-in fetch), no packages.
//
//   KASHGAR_API_KEY=... node docs/examples/own_state.mjs http://127.0.0.1:8000 [level]
//
// The last line printed is the answer as JSON.

const [url = "http://127.0.0.1:8000", level = "novice"] = process.argv.slice(2);
const key = process.env.KASHGAR_API_KEY;

// Your game, in your program's own terms (here: seat 1 is thinking, mid-turn).
const myGame = {
  firstPlayer: 0,
  turnPlayer: 1,
  turnsDone: 1,
  players: [
    { goods: { ginger: 3, cloves: 3, pepper: 3, anise: 3, cinnamon: 3, gold: 3, mules: 3 },
      caravans: [["schreiber", "matriarch"], ["patriarch", "zigeuner"], ["patriarch", "kraemerin"]],
      contractsDone: [] },
    { goods: { ginger: 3, cloves: 3, pepper: 3, anise: 3, cinnamon: 3, gold: 3, mules: 3 },
      caravans: [["patriarch", "waldbaeuerin"], ["patriarch", "stadtwache"], ["kraeuterfrau", "patriarch"]],
      contractsDone: [] },
  ],
  contractsShown: [26, 37, 25, 17],
  discardPile: [],
  outOfGame: [],
  // Seat 1 played the Patriarch at the front of its third caravan (now at its back, position 1),
  // whose first action drew two Standard cards: it is to keep one.
  midTurn: { step: "keep", card: "patriarch", caravan: 2, position: 1, action: "a",
             drawn: ["quacksalber", "korbmacher"], from: "standard" },
};

// The same position as the API's state document: a view of the seat to move (observer), the
// decks left out (every card not seen elsewhere is in its deck, in an order nobody knows).
function toKashgarState(game, observer) {
  const doc = {
    schema: "kashgar/state@1",
    players: game.players.length,
    start_player: game.firstPlayer,
    turn_player: game.turnPlayer,
    turn: game.turnsDone,
    observer,
    seats: game.players.map((p) => ({ resources: p.goods, caravans: p.caravans, contracts: p.contractsDone })),
    display: game.contractsShown,
    discard: game.discardPile,
    removed: game.outOfGame,
    pending: null,
  };
  const m = game.midTurn;
  if (m) {
    doc.pending = { wait: m.step, card: m.card, caravan: m.caravan, position: m.position, action: m.action,
                    step: 0, drawn: m.drawn, drawn_from: m.from };
  }
  return doc;
}

async function call(path, body) {
  const headers = { "Content-Type": "application/json" };
  if (key) headers.Authorization = `Bearer ${key}`;
  const resp = await fetch(url + path, { method: "POST", headers, body: JSON.stringify(body) });
  const answer = await resp.json();
  if (!resp.ok) {  // the API's error body: what is wrong, and where (a JSON pointer into the body)
    throw new Error(`${path}: ${resp.status} ${answer.error}: ${answer.message} (at ${answer.pointer || "/"})`);
  }
  return answer;
}

const state = toKashgarState(myGame, myGame.turnPlayer);
const legal = await call("/legal", { state });
console.log(`seat ${legal.current_player} may: ${legal.legal.map((d) => d.text).join(", ")}`);
let answer = await call("/suggest", { state, level, seed: 1 });
if (answer.job_id) {  // a level beyond the synchronous limits runs as a job: poll it to its end
  let job;
  do {
    await new Promise((r) => setTimeout(r, 250));
    const resp = await fetch(new URL(answer.status_url, url), { headers: key ? { Authorization: `Bearer ${key}` } : {} });
    job = await resp.json();
  } while (job.status === "queued" || job.status === "started");
  if (job.status !== "finished") throw new Error(`job ${job.job_id} ${job.status}: ${job.error}`);
  answer = job.result;
}
console.log(`${level} suggests ${answer.decision_text}: ${answer.description}`);
console.log(JSON.stringify({ decision_text: answer.decision_text, legal: legal.legal.map((d) => d.text),
                             win_prob: answer.win_prob, iterations: answer.iterations }));

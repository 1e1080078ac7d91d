// Run the bots as a subprocess: `kashgar engine` reads one JSON request a line on stdin and
// writes one JSON answer a line on stdout, with the request's id (docs/integrate.md). No HTTP,
// no server. Here every seat is a bot; Node 18+, no packages.
//
//   node docs/examples/engine_subprocess.mjs [--max-decisions N] [command ...]
//
// command: how to start the engine (default: kashgar engine). The last line printed is the
// outcome as JSON.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

let args = process.argv.slice(2);
let maxDecisions = 0;
if (args[0] === "--max-decisions") {
  maxDecisions = Number(args[1]);
  args = args.slice(2);
}
const [cmd, ...cmdArgs] = args.length ? args : ["kashgar", "engine"];

const engine = spawn(cmd, cmdArgs, { stdio: ["pipe", "pipe", "inherit"] });
const waiting = new Map();  // id -> the promise's resolve
let nextId = 0;
createInterface({ input: engine.stdout }).on("line", (line) => {
  const answer = JSON.parse(line);
  waiting.get(answer.id)?.(answer);
  waiting.delete(answer.id);
});

// One request: {id, op, ...the body of POST /<op>}; the answer has the same id, and `status`.
function ask(op, body) {
  const id = String(++nextId);
  return new Promise((resolve, reject) => {
    waiting.set(id, (answer) => (answer.status === 200 ? resolve(answer)
      : reject(new Error(`${op}: ${answer.status} ${answer.error}: ${answer.message} (at ${answer.pointer || "/"})`))));
    engine.stdin.write(JSON.stringify({ id, op, ...body }) + "\n");
  });
}

let { state } = await ask("games", { players: 3, seed: 5 });
let position = await ask("legal", { state });
let decisions = 0;
while (!position.is_terminal && !(maxDecisions && decisions >= maxDecisions)) {
  const seat = position.current_player;
  const view = (await ask("legal", { state, observer: seat })).state;  // what that seat sees
  const suggestion = await ask("suggest", { state: view, level: "novice", seed: decisions });
  const applied = await ask("apply", { state, decision: suggestion.decision_text });
  console.log(`seat ${seat}: ${applied.decision.description}`);
  state = applied.state;
  position = applied;  // an apply answer holds the next position too
  decisions += 1;
}
engine.stdin.end();  // end of input: the engine exits with status 0
const code = await new Promise((resolve) => engine.on("close", resolve));
console.log(JSON.stringify({ decisions, is_terminal: position.is_terminal, vp: position.vp,
                             winner: position.winner, engine_exit: code }));

"""Faults under load: while async searches (and sync suggestions) stream in, SIGKILL an RQ worker
mid-search and restart Redis; then account for every accepted job. With `--review`, the faults
of one game review instead: a work horse SIGKILLed while it reviews a part, then Redis SIGKILLed
and started again while the retried part runs; then what the review kept, and which attempts
each fault used (`review_faults`).

Each job the service accepted (202) must end finished, or failed with its error visible; none
lost (404: the service forgot it) and none stuck (not done long after the load stopped).

    python -m loadtests.faults                       # Redis with an append-only file (fsync always)
    python -m loadtests.faults --redis-persistence none    # a Redis that forgets on restart
    python -m loadtests.faults --review                    # one review: a horse killed, Redis restarted

Redis is killed (SIGKILL) and started again on the same port and data directory; with
`--redis-persistence aof` it comes back with every acknowledged write. While it is down, async
requests get 503 (not accepted, counted apart) and sync requests keep answering.
Everything is bounded: `--duration` seconds of load, at most `--max-jobs` jobs, `--settle`
seconds to wait for the last jobs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from lab.serving import Gunicorn, Proc, Worker, free_port, http_json, wait_until
from loadtests.corpus import load as load_corpus
from loadtests.stack import DEFAULT_REPORTS, STACK_ENV, cores

TERMINAL = ("finished", "failed", "cancelled")
FAULT_ENV = dict(STACK_ENV, KASHGAR_HEARTBEAT_TIMEOUT="3.0", KASHGAR_HEARTBEAT_INTERVAL="0.3", KASHGAR_MAX_ATTEMPTS="3")


class RestartableRedis:
    """`redis-server` on a fixed loopback port and data directory, so that it can be killed and
    started again; `persistence` "aof" (append-only, fsync on every write) or "none"."""

    def __init__(self, log_dir: str, persistence: str = "aof") -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="kashgar-fault-redis-")
        self.log_dir = log_dir
        self.persistence = persistence
        self.proc: Proc | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RestartableRedis:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is not installed")
        aof = (
            ["--appendonly", "yes", "--appendfsync", "always"] if self.persistence == "aof" else ["--appendonly", "no"]
        )
        argv = [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *aof, "--dir", self.dir]
        self.starts += 1
        self.proc = Proc(f"redis-{self.port}-{self.starts}", argv, log_dir=self.log_dir)
        wait_until(self.ping, 20.0, what=f"redis-server on {self.port}")
        return self

    def ping(self) -> bool:
        import redis

        return bool(redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.5).ping())

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill_group(signal.SIGKILL)
            self.proc.popen.wait(10)
            self.proc.stop()
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


class Load:
    """Bounded load: `submitters` threads post async searches, one thread sync suggestions."""

    def __init__(self, url: str, duration: float, max_jobs: int, submitters: int, seed: int) -> None:
        self.url = url
        self.duration = duration
        self.max_jobs = max_jobs
        self.submitters = submitters
        self.entries = load_corpus()
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.accepted: list[str] = []
        self.async_status: Counter[str] = Counter()
        self.sync_status: Counter[str] = Counter()
        self.stop = threading.Event()

    def _submit(self, k: int) -> None:
        rng = random.Random(self.rng.random() + k)
        while not self.stop.is_set():
            with self.lock:
                if len(self.accepted) >= self.max_jobs:
                    return
            e = rng.choice(self.entries)
            body = {
                "state": e["state"],
                "iterations": rng.choice([800, 1500, 3000]),
                "parallel": rng.choice([1, 2]),
                "seed": rng.randrange(1 << 30),
                "mode": "async",
            }
            try:
                status, out = http_json("POST", self.url + "/suggest", body, timeout=15)
            except OSError as exc:
                status, out = 0, str(exc)
            with self.lock:
                self.async_status[str(status)] += 1
                if status == 202:
                    self.accepted.append(out["job_id"])
            self.stop.wait(rng.uniform(0.2, 0.8))

    def _sync(self) -> None:
        rng = random.Random(7)
        while not self.stop.is_set():
            e = rng.choice(self.entries)
            body = {"state": e["state"], "level": "novice", "seed": 1, "mode": "sync"}
            try:
                status, _ = http_json("POST", self.url + "/suggest", body, timeout=15)
            except OSError:
                status = 0
            with self.lock:
                self.sync_status[str(status)] += 1
            self.stop.wait(0.3)

    def run(self, faults: list[tuple[float, str, Any]]) -> list[dict[str, Any]]:
        """Run the load for `duration` seconds; at each (second, name, action) call the action."""
        threads = [threading.Thread(target=self._submit, args=(k,), daemon=True) for k in range(self.submitters)]
        threads.append(threading.Thread(target=self._sync, daemon=True))
        t0 = time.monotonic()
        for t in threads:
            t.start()
        log: list[dict[str, Any]] = []
        for at, name, action in sorted(faults, key=lambda f: f[0]):
            self.stop.wait(max(0.0, at - (time.monotonic() - t0)))
            t1 = time.monotonic()
            detail = action()
            log.append(
                {"at_s": round(t1 - t0, 1), "fault": name, "took_s": round(time.monotonic() - t1, 2), "detail": detail}
            )
            print(f"[{t1 - t0:5.1f} s] {name}: {detail}", flush=True)
        self.stop.wait(max(0.0, self.duration - (time.monotonic() - t0)))
        self.stop.set()
        for t in threads:
            t.join(20)
        return log


def rq_state(redis_url: str, queue_name: str, rq_id: str) -> dict[str, Any]:
    """Where RQ holds one part attempt (`<job>-p<index>-a<attempt>`): its status, and which of the
    queue's lists and registries name it; for a stuck part, read before the stack goes away."""
    import redis
    from rq import Queue
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    conn = redis.Redis.from_url(redis_url, socket_timeout=5)
    q = Queue(queue_name, connection=conn)
    try:
        status: Any = Job.fetch(rq_id, connection=conn).get_status(refresh=False)
    except NoSuchJobError:
        status = None
    return {
        "rq_id": rq_id,
        "rq_status": None if status is None else str(getattr(status, "value", status)),
        "in_queue": conn.lpos(q.key, rq_id) is not None,
        "in_intermediate": conn.lpos(q.intermediate_queue_key, rq_id) is not None,
        "in_started_registry": rq_id in q.started_job_registry,
        "in_failed_registry": rq_id in q.failed_job_registry,
    }


def account(url: str, job_ids: list[str], settle: float) -> dict[str, Any]:
    """Poll every accepted job until it is done or `settle` seconds have passed; classify."""
    deadline = time.monotonic() + settle
    final: dict[str, dict[str, Any] | None] = {}
    pending = list(job_ids)
    while pending and time.monotonic() < deadline:
        still = []
        for jid in pending:
            try:
                status, job = http_json("GET", f"{url}/jobs/{jid}", timeout=10)
            except OSError:
                still.append(jid)
                continue
            if status == 404:
                final[jid] = None
            elif status == 200 and job["status"] in TERMINAL:
                final[jid] = job
            else:
                if status == 200:
                    final[jid] = job
                still.append(jid)
        pending = still
        if pending:
            time.sleep(0.5)
    counts: Counter[str] = Counter()
    examples: dict[str, Any] = {}
    for jid in job_ids:
        job = final.get(jid)
        if job is None:
            kind = "lost" if jid in final else "stuck"
        elif jid in pending:
            kind = "stuck"
        elif job["status"] == "finished":
            kind = "finished"
            if job.get("retried"):
                counts["finished_after_retry"] += 1
        elif job["status"] == "failed":
            kind = "failed_visible" if job.get("error") else "failed_silent"
        else:
            kind = job["status"]
        if job is not None and job.get("retried"):
            counts["retried"] += 1
        counts[kind] += 1
        if kind not in ("finished",) and kind not in examples:
            examples[kind] = {
                "job_id": jid,
                "job": job if job is None else {k: job.get(k) for k in ("status", "error", "parts", "retried")},
            }
    return {
        "accepted": len(job_ids),
        "finished": counts["finished"],
        "finished_after_retry": counts["finished_after_retry"],
        "retried": counts["retried"],
        "failed_visible": counts["failed_visible"],
        "failed_silent": counts["failed_silent"],
        "cancelled": counts["cancelled"],
        "lost": counts["lost"],
        "stuck": counts["stuck"],
        "examples": examples,
    }


#: The review run's settings: dead workers found in 2 s, two attempts per part (the default), so a
#: part retried once fails for good on the next attempt an outage would use.
REVIEW_ENV = dict(STACK_ENV, KASHGAR_HEARTBEAT_TIMEOUT="2.0", KASHGAR_HEARTBEAT_INTERVAL="0.2",
                  KASHGAR_MAX_ATTEMPTS="2", KASHGAR_REDIS_TIMEOUT="1.0", KASHGAR_LOG_LEVEL="INFO")


def short_record(moves: int, seed: int) -> dict[str, Any]:
    """The record of a 2-player game's first `moves` decisions, each chosen at random (seeded)
    among the legal ones, from the deal of `seed`."""
    import engine_ext
    from engine_ext import record as records

    game = engine_ext.new_game(players=2, seed=seed)
    rng = random.Random(seed)
    played = []
    for _ in range(moves):
        text = str(rng.choice(game.legal()))
        game.apply(text)
        played.append(text)
    return records.record_from_moves(played, players=2, seed=seed)


def horses(pid: int) -> list[int]:
    """The live work horses of the RQ worker `pid` (its children, zombies left out)."""
    from lab.serving import descendants

    out = []
    for child in descendants(pid):
        try:
            stat = Path(f"/proc/{child}/stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[0] != "Z":
            out.append(child)
    return out


def review_faults(log_dir: str, record: dict[str, Any], level: str = "master", redis_down: float = 3.0,
                  rq_workers: int = 2, timeout: float = 240.0) -> dict[str, Any]:
    """One review on a stack of its own (redis-server with an append-only file, `rq_workers`
    `kashgar worker`s, gunicorn with one web worker): while a part runs, its work horse is SIGKILLed
    by its pid (its worker lives on); once that part is taken again, `redis-server` is SIGKILLed
    and started again `redis_down` seconds later on the same port and data directory. What the
    review kept, and the attempts each fault used (a part's `history` entry is an attempt its
    worker's death used; one dated after the Redis kill was used by the restart)."""
    redis_server = RestartableRedis(log_dir, "aof").start()
    env = dict(REVIEW_ENV, KASHGAR_REDIS_URL=redis_server.url)
    workers = [Worker(redis_server.url, env=env, log_dir=log_dir).start() for _ in range(rq_workers)]
    deadline = time.monotonic() + timeout
    out: dict[str, Any] = {"level": level, "rq_workers": rq_workers, "redis_down_s": redis_down}
    try:
        with Gunicorn(env=env, workers=1, log_dir=log_dir) as web:
            status, accepted = http_json("POST", web.url + "/reviews", {"record": record, "level": level, "seed": 2})
            if status != 202:
                raise RuntimeError(f"POST /reviews: {status} {accepted}")
            url = web.url + accepted["status_url"]
            out["accepted"] = 1

            def job() -> dict[str, Any]:
                status, body = http_json("GET", url, timeout=10)
                if status != 200:
                    raise RuntimeError(f"GET {url}: {status} {body}")
                return body  # type: ignore[no-any-return]

            def a_running_horse() -> tuple[int, Worker, list[int]] | None:
                for p in job()["parts"]:
                    for w in workers:
                        if p["status"] == "started" and p["worker"] == f"rq:{w.name}" and w.proc is not None:
                            found = horses(w.proc.pid)
                            if found:
                                return p["index"], w, found
                return None

            index, victim, pids = wait_until(a_running_horse, deadline - time.monotonic(), interval=0.1,
                                             what="a part running in a work horse")
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            killed_at = time.monotonic()
            out["horse_killed"] = {"part": index, "worker": victim.name, "pids": pids}

            def retried_and_running() -> dict[str, Any] | None:
                for p in job()["parts"]:
                    if p["history"] and p["status"] == "started" and p["attempt"] == 2:
                        return p
                return None

            retried = wait_until(retried_and_running, deadline - time.monotonic(), interval=0.1,
                                 what="the retried part running")
            out["retried_part"] = retried["index"]
            out["retried_part_started_again_after_s"] = round(time.monotonic() - killed_at, 1)
            redis_killed_at = time.time()
            redis_server.kill()
            time.sleep(redis_down)
            redis_server.start()

            def ended() -> dict[str, Any] | None:
                body = job()
                return body if body["status"] in TERMINAL else None

            final = wait_until(ended, deadline - time.monotonic(), interval=0.2, what="the review's end")
    finally:
        alive = [w.name for w in workers if w.proc is not None and w.proc.alive()]
        for w in workers:
            w.stop()
        redis_server.stop()
    result = final.get("result") or {}
    history = [h for p in final["parts"] for h in p["history"]]
    total = final["progress"]["decisions_total"]
    out.update({
        "status": final["status"],
        "finished": int(final["status"] == "finished"),
        "decisions_total": total,
        "decisions_reviewed": len(result.get("decisions", [])),
        "decisions_lost": total - len(result.get("decisions", [])),
        "missing": result.get("missing"),
        "attempts": {str(p["index"]): p["attempt"] for p in final["parts"]},
        "attempts_used": len(history),
        "attempts_used_by_redis_restart": sum(1 for h in history if float(h["at"]) >= redis_killed_at),
        "history": [dict(h, part=p["index"]) for p in final["parts"] for h in p["history"]],
        "rq_workers_alive_after": len(alive),
        "cores": cores(),
    })
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=40.0, help="seconds of load")
    ap.add_argument("--max-jobs", type=int, default=200)
    ap.add_argument("--submitters", type=int, default=3)
    ap.add_argument("--rq-workers", type=int, default=2)
    ap.add_argument("--web-workers", type=int, default=None)
    ap.add_argument("--kill-worker-at", type=float, default=8.0)
    ap.add_argument("--restart-redis-at", type=float, default=20.0)
    ap.add_argument("--redis-down", type=float, default=3.0, help="seconds Redis stays down")
    ap.add_argument("--redis-persistence", choices=["aof", "none"], default="aof")
    ap.add_argument("--settle", type=float, default=180.0, help="seconds to wait for the last jobs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--no-supervise",
        dest="supervise",
        action="store_false",
        help="do not restart RQ workers that exit by themselves (the deploy units restart them)",
    )
    ap.add_argument("--reports", default=str(DEFAULT_REPORTS))
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    ap.add_argument("--review", action="store_true",
                    help="one review instead of the load: a work horse killed mid-part, then Redis restarted while "
                         "the retried part runs (--redis-down, --rq-workers, --seed apply)")
    ap.add_argument("--review-moves", type=int, default=24, help="decisions of the reviewed 2-player game")
    ap.add_argument("--review-level", default="master")
    args = ap.parse_args(argv)
    if args.review:
        return _review_main(args)

    logs = Path(args.reports) / f"faults-{args.redis_persistence}-logs"
    logs.mkdir(parents=True, exist_ok=True)
    redis_server = RestartableRedis(str(logs), args.redis_persistence).start()
    env = dict(FAULT_ENV, KASHGAR_REDIS_URL=redis_server.url)
    workers = [Worker(redis_server.url, env=env, log_dir=str(logs)).start() for _ in range(args.rq_workers)]
    web = Gunicorn(env=env, workers=args.web_workers or cores(), log_dir=str(logs))
    figures: dict[str, Any] = {}
    try:
        web.start()

        def kill_worker() -> str:
            # the busiest moment: wait (bounded) for a work horse, then SIGKILL worker and horse
            from lab.serving import descendants

            victim = workers[0]
            assert victim.proc is not None
            with contextlib.suppress(TimeoutError):
                wait_until(lambda: descendants(victim.proc.pid), 10.0, what="a work horse")  # type: ignore[union-attr]
            horses = descendants(victim.proc.pid)
            with lock:
                killed.add(id(victim))
            victim.kill()
            with lock:
                workers.append(Worker(redis_server.url, env=env, log_dir=str(logs)).start())
            return f"SIGKILL worker pid {victim.proc.pid} and work horse(s) {horses}; started a replacement"

        def restart_redis() -> str:
            redis_server.kill()
            time.sleep(args.redis_down)
            redis_server.start()
            return f"SIGKILL redis-server, down {args.redis_down} s, started again ({args.redis_persistence})"

        def supervise() -> None:
            """Like systemd's Restart=always for the worker units: restart workers that exit."""
            while not done.wait(1.0):
                with lock:
                    for w in list(workers):
                        if id(w) in killed or w.proc is None or w.proc.alive():
                            continue
                        killed.add(id(w))
                        exits.append(f"{w.name} exited with {w.proc.popen.returncode}")
                        if args.supervise:
                            workers.append(Worker(redis_server.url, env=env, log_dir=str(logs)).start())

        lock, done = threading.Lock(), threading.Event()
        killed: set[int] = set()
        exits: list[str] = []
        watchdog = threading.Thread(target=supervise, daemon=True)
        watchdog.start()
        load = Load(web.url, args.duration, args.max_jobs, args.submitters, args.seed)
        fault_log = load.run(
            [
                (args.kill_worker_at, "kill RQ worker", kill_worker),
                (args.restart_redis_at, "restart Redis", restart_redis),
            ]
        )
        alive = sum(1 for w in workers if w.proc is not None and w.proc.alive())
        print(f"unplanned worker exits: {exits or 'none'}", flush=True)
        print(f"load done: {len(load.accepted)} jobs accepted; accounting (up to {args.settle:.0f} s)...", flush=True)
        t_settle = time.monotonic()
        figures = account(web.url, load.accepted, args.settle)
        done.set()
        stuck = figures["examples"].get("stuck")
        if stuck and stuck.get("job"):
            with contextlib.suppress(Exception):  # a diagnosis must not hide the figures
                stuck["rq"] = [
                    rq_state(redis_server.url, env.get("KASHGAR_QUEUE_NAME", "kashgar"),
                             f"{stuck['job_id']}-p{p['index']}-a{p['attempt']}")
                    for p in stuck["job"]["parts"] if p["status"] not in TERMINAL
                ]
        registered: Any = None
        with contextlib.suppress(Exception):
            registered = int(http_json("GET", web.url + "/readyz", timeout=10)[1]["checks"]["workers"])
        figures.update(
            {
                "settle_s": round(time.monotonic() - t_settle, 1),
                "async_requests": dict(load.async_status),
                "sync_requests": dict(load.sync_status),
                "faults": fault_log,
                "rq_workers_alive_after_load": alive,
                "rq_workers_registered_after_load": registered,  # /readyz's count; should equal the live ones
                "rq_worker_exits_unplanned": exits,
                "supervised": args.supervise,
                "redis_persistence": args.redis_persistence,
                "duration_s": args.duration,
                "cores": cores(),
            }
        )
    finally:
        web.stop()
        for w in workers:
            w.stop()
        redis_server.stop()
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    ok = figures.get("lost", 1) == 0 and figures.get("stuck", 1) == 0 and figures.get("failed_silent", 1) == 0
    print("OK: every accepted job finished or failed visibly" if ok else "NOT OK: jobs lost, stuck or failed silently")
    return 0 if ok else 1



def _review_main(args: argparse.Namespace) -> int:
    logs = Path(args.reports) / "faults-review-logs"
    logs.mkdir(parents=True, exist_ok=True)
    figures = review_faults(str(logs), short_record(args.review_moves, 61 + args.seed), args.review_level,
                            args.redis_down, args.rq_workers)
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    ok = figures["finished"] == 1 and figures["decisions_lost"] == 0 and figures["attempts_used_by_redis_restart"] == 0
    print("OK: every decision reviewed, no attempt used by the Redis restart" if ok
          else "NOT OK: decisions lost, or an attempt used by the Redis restart")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""A Python client of the Kashgar AI HTTP API, on the standard library alone: it imports nothing
of the server (no Flask), so any program can use it.

    from kashgar_client import KashgarClient
    api = KashgarClient("http://127.0.0.1:8000", api_key="...")     # or KASHGAR_API_KEY
    game = api.new_game(players=3, seed=1)
    answer = api.suggest(game.state, level="club")                   # follows a job to its end
    nxt = api.apply(game.state, answer.decision_text)
"""

from .answers import (
    Accepted,
    Alternative,
    Applied,
    Decision,
    Job,
    JobProgress,
    JobStatus,
    Level,
    Position,
    State,
    Suggestion,
)
from .client import Answer, KashgarClient, retry_after_seconds
from .errors import JobFailed, JobTimeout, KashgarAPIError, KashgarError, KashgarUnreachable
from .events import JobEvent

__all__ = [
    "Accepted",
    "Alternative",
    "Answer",
    "Applied",
    "Decision",
    "Job",
    "JobEvent",
    "JobFailed",
    "JobProgress",
    "JobStatus",
    "JobTimeout",
    "KashgarAPIError",
    "KashgarClient",
    "KashgarError",
    "KashgarUnreachable",
    "Level",
    "Position",
    "State",
    "Suggestion",
    "retry_after_seconds",
]

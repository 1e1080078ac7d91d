"""Long searches as jobs: records in a store (Redis or SQLite), parts run by RQ workers or
embedded threads, the same API either way."""

from .manager import JobManager, build_manager
from .model import JobStatus
from .store import JobStore, RedisStore, SqliteStore, StoreUnavailable

__all__ = ["JobManager", "JobStatus", "JobStore", "RedisStore", "SqliteStore", "StoreUnavailable", "build_manager"]

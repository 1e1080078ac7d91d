"""gunicorn config for Kashgar AI: `gunicorn -c deploy/gunicorn.conf.py`.

The values live in `service/gunicorn_conf.py` (also used by `kashgar serve`): one worker process
per core (threads read requests, with a deadline on each; one search at a time in the app), a
worker timeout above the synchronous search cap, the app preloaded, a shared embedded job
database and multi-process Prometheus metrics. Override here or on the command line.
"""

from service.gunicorn_conf import (  # noqa: F401 - gunicorn reads these names
    accesslog,
    backlog,
    bind,
    child_exit,
    control_socket_disable,
    errorlog,
    graceful_timeout,
    keepalive,
    loglevel,
    on_exit,
    on_starting,
    post_fork,
    post_worker_init,
    pre_exec,
    preload_app,
    threads,
    timeout,
    when_ready,
    worker_class,
    worker_exit,
    workers,
    wsgi_app,
)

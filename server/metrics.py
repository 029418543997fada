"""The server's Prometheus metrics, and one small function per event that moves them.

Callers never touch a metric object: they call `action_applied(rule)`, `socket_opened()` and
the like. Every label value is bounded here, whatever a caller passes: a route is its template
(`/api/v1/games/{id}`, one label for every unknown path), a method outside the usual ones is
`other`, a refusal rule outside the engine's and the races' is `other`, a kind that is not a
short lower-case word is `other`. So a client can never grow the label set, and no label ever
holds a secret, a player or a raw path.

With one process, the metrics live in this module's own registry. With `--workers N`, the
parent sets `PROMETHEUS_MULTIPROC_DIR` before starting the workers (`server.serve`), and
prometheus-client's multiprocess mode keeps each worker's figures in a file there; a scrape,
whichever worker answers it, adds them up. Gauges say how (`livesum`: the sum over the workers
that are alive). The metrics are made on first use, not at import.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from prometheus_client.exposition import choose_encoder
from prometheus_client.multiprocess import MultiProcessCollector

from server.engine.messages import RULES

MULTIPROC_DIR: Final = "PROMETHEUS_MULTIPROC_DIR"
NAMESPACE: Final = "solitaire"

UNMATCHED: Final = "(unmatched)"
"""The route label of every request that no route takes (a 404 or 405 of the router)."""
OTHER: Final = "other"

METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
RACE_RULES: Final = frozenset({"race_not_started", "race_over", "race_no_hints"})
REFUSAL_RULES: Final = frozenset(RULES) | RACE_RULES
GAME_RULES: Final = frozenset({"classic", "relaxed"})
KIND: Final = re.compile(r"[a-z][a-z_]{0,31}")

LATENCY_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
SOLVER_BUCKETS: Final = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0)


def multiprocess() -> bool:
    """Whether the figures are kept in `PROMETHEUS_MULTIPROC_DIR` (`--workers N`)."""
    return bool(os.environ.get(MULTIPROC_DIR))


@dataclass(frozen=True, slots=True)
class Metrics:
    registry: CollectorRegistry
    requests: Counter
    latency: Histogram
    applied: Counter
    refused: Counter
    sockets: Gauge
    watchers: Gauge
    solver_queue: Gauge
    solver_seconds: Histogram
    pool_in_use: Gauge
    rate_refusals: Counter
    reads: Counter
    replica_lag: Gauge


@functools.cache
def metrics() -> Metrics:
    """The metrics of this process, made on first use."""
    registry = CollectorRegistry(auto_describe=True)
    if not multiprocess():
        ProcessCollector(registry=registry)  # CPU, memory, open files (one process only)
    return Metrics(
        registry=registry,
        requests=Counter(
            "http_requests",
            "HTTP requests answered, by route template, method and status.",
            ["route", "method", "status"],
            namespace=NAMESPACE,
            registry=registry,
        ),
        latency=Histogram(
            "http_request_duration_seconds",
            "Time to answer an HTTP request (a WebSocket: its whole life), by route template.",
            ["route", "method"],
            buckets=LATENCY_BUCKETS,
            namespace=NAMESPACE,
            registry=registry,
        ),
        applied=Counter(
            "actions_applied",
            "Game actions applied (moves, undos, taps), by the game's rule.",
            ["rule"],
            namespace=NAMESPACE,
            registry=registry,
        ),
        refused=Counter(
            "actions_refused",
            "Game actions refused, by the rule id that refused them.",
            ["rule"],
            namespace=NAMESPACE,
            registry=registry,
        ),
        sockets=Gauge(
            "websockets_open",
            "WebSocket connections open.",
            multiprocess_mode="livesum",
            namespace=NAMESPACE,
            registry=registry,
        ),
        watchers=Gauge(
            "watchers",
            "Games and races watched, summed over the open WebSocket connections.",
            multiprocess_mode="livesum",
            namespace=NAMESPACE,
            registry=registry,
        ),
        solver_queue=Gauge(
            "solver_queue_length",
            "Solver jobs waiting or running, by kind.",
            ["kind"],
            multiprocess_mode="livesum",
            namespace=NAMESPACE,
            registry=registry,
        ),
        solver_seconds=Histogram(
            "solver_seconds",
            "Time a solver job took from its request to its answer, by kind.",
            ["kind"],
            buckets=SOLVER_BUCKETS,
            namespace=NAMESPACE,
            registry=registry,
        ),
        pool_in_use=Gauge(
            "db_pool_connections_in_use",
            "Database connections checked out of the pool.",
            multiprocess_mode="livesum",
            namespace=NAMESPACE,
            registry=registry,
        ),
        rate_refusals=Counter(
            "rate_refusals",
            "Requests and connections refused by a rate budget or a cap, by kind.",
            ["kind"],
            namespace=NAMESPACE,
            registry=registry,
        ),
        reads=Counter(
            "db_reads",
            "Transactions of the lag-tolerant reads, by where they ran (primary, replica).",
            ["target"],
            namespace=NAMESPACE,
            registry=registry,
        ),
        replica_lag=Gauge(
            "replica_lag_seconds",
            "Each read replica's lag as last checked (NaN: not answering), by its index in "
            "DATABASE_REPLICA_URLS.",
            ["replica"],
            multiprocess_mode="livemax",
            namespace=NAMESPACE,
            registry=registry,
        ),
    )


# ---------------------------------------------------------------- bounded labels


def method_label(method: str) -> str:
    return method if method in METHODS else OTHER


def kind_label(kind: str) -> str:
    return kind if KIND.fullmatch(kind) else OTHER


def refusal_label(rule: str) -> str:
    return rule if rule in REFUSAL_RULES else OTHER


def game_rule_label(rule: str) -> str:
    return rule if rule in GAME_RULES else OTHER


# ---------------------------------------------------------------- events


def request_answered(route: str, method: str, status: int, seconds: float) -> None:
    """An HTTP request was answered (`route` is its template, or `UNMATCHED`)."""
    m = metrics()
    method = method_label(method)
    status_label = str(status) if 100 <= status <= 599 else OTHER
    m.requests.labels(route, method, status_label).inc()
    m.latency.labels(route, method).observe(seconds)


def action_applied(rule: str) -> None:
    """A game action was applied (not an idempotent replay); `rule` is the game's rule,
    `classic` or `relaxed`."""
    metrics().applied.labels(game_rule_label(rule)).inc()


def action_refused(rule: str) -> None:
    """A game action was refused; `rule` is the refusal's rule id (`same_suit`,
    `race_over`, ...)."""
    metrics().refused.labels(refusal_label(rule)).inc()


def socket_opened() -> None:
    metrics().sockets.inc()


def socket_closed() -> None:
    metrics().sockets.dec()


def watchers(delta: int) -> None:
    """`delta` games or races more (or fewer, negative) are watched by a connection."""
    metrics().watchers.inc(delta)


def solver_queued(kind: str, n: int) -> None:
    """`n` solver jobs of the lane `kind` are waiting or running here now: `play` (hints,
    winnable-only deals, the daily deal) or `public` (deal verdicts, replay verifications)."""
    metrics().solver_queue.labels(kind_label(kind)).set(n)


def solver_time(kind: str, seconds: float) -> None:
    """A solver job of the lane `kind` (`play` or `public`) was answered after `seconds`
    (queueing included)."""
    metrics().solver_seconds.labels(kind_label(kind)).observe(seconds)


def rate_refused(kind: str) -> None:
    """A request, message or connection was refused by a rate budget or a cap of `kind`:
    the budgets `address`, `player`, `anonymous`, `signup` and `signin`; the caps `in_flight`
    (requests of an address at once), `address_sockets` and `player_sockets` (open WebSockets),
    `costly` (a client's or an address's costly requests at once) and `busy` (a full solver
    lane)."""
    metrics().rate_refusals.labels(kind_label(kind)).inc()


def pool_checked_out(delta: int) -> None:
    metrics().pool_in_use.inc(delta)


def pool_in_use(n: int) -> None:
    metrics().pool_in_use.set(n)


READ_TARGETS: Final = frozenset({"primary", "replica"})


def read_from(target: str) -> None:
    """A transaction of a lag-tolerant read ran on `target`: `primary` or `replica`."""
    metrics().reads.labels(target if target in READ_TARGETS else OTHER).inc()


def replica_lag(replica: str, seconds: float) -> None:
    """The replica `replica` (its index in DATABASE_REPLICA_URLS) lags `seconds` (NaN: it did
    not answer)."""
    metrics().replica_lag.labels(replica if replica.isdigit() else OTHER).set(seconds)


# ---------------------------------------------------------------- exposition


def exposition(accept: str | None) -> tuple[bytes, str]:
    """The body and content type of a scrape: this process's figures, or with `--workers N`
    every worker's, added up. The Prometheus text format unless `accept` asks for
    OpenMetrics."""
    m = metrics()
    encoder, content_type = choose_encoder(accept or "")
    if multiprocess():
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return encoder(registry), content_type
    return encoder(m.registry), content_type

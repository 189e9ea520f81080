"""The realistic world loaded through remember by 4 clients into ours and into the reference server: facts/s and remember p95.

    make bench-reference-load
    .venv-reference/bin/python bench/reference_load.py [--size 10k] [--clients 4] [--workers 4]
                                                       [--rounds 2] [--reference-first]

The world is bench/realistic_world.py's (seeded; texts of 50 facts, every fact new). Each server
gets the same texts, one per POST /v1/gb/remember, `--clients` at a time, into one dataset of one
user, each load on fresh stores; `--rounds` rounds, ours first in the first (`--reference-first`
turns it), the order turning every round. Prints each load's time, facts/s, the remembers' median
and p95 (and p95 over median), and the facts each server holds afterwards (ours from its database,
the reference's from its SQLite file); then the median of the rounds' rate ratios.

The servers, the proxy, the fakes and the network namespace are bench/reference.py's: ours is the
local API with its functions in `--workers` processes (as `gligabao serve --workers N` runs them)
on a scratch database of the embedded PostgreSQL; the reference on its default stores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench"), str(ROOT / "layers" / "core")]

import realistic_world  # noqa: E402
import reference  # noqa: E402

USER = "bench"
DATASET = "world"
WARM_UP_TEXTS = 8  # one-fact texts into a dataset of their own first, not measured


@dataclass
class LoadFigures:
    name: str
    seconds: float
    remember_ms: list[float]
    facts_said: int
    facts_held: int

    def p95(self) -> float:
        return statistics.quantiles(self.remember_ms, n=20, method="inclusive")[18]

    def line(self) -> str:
        median = statistics.median(self.remember_ms)
        return (
            f"{self.name:<12}{self.seconds:>9.1f}{self.facts_said / self.seconds:>9.1f}"
            f"{median:>11.1f}{self.p95():>9.1f}{self.p95() / median:>8.2f}"
            f"   {self.facts_held:,} of {self.facts_said:,} facts held"
        )


def post_each(port: int, texts: list[str], dataset: str, clients: int) -> list[float]:
    """Every text in one POST /v1/gb/remember, `clients` at a time: each one's milliseconds."""
    connections = threading.local()  # one keep-alive connection per client thread

    def remember(text: str) -> float:
        client = getattr(connections, "client", None) or reference.JsonClient(port)
        connections.client = client
        reply, ms = client.post("/v1/gb/remember", {"user_id": USER, "dataset": dataset, "text": text})
        if not reply.get("edges"):
            raise RuntimeError(f"a remember stored no fact: {reply}")
        return ms

    with ThreadPoolExecutor(clients) as pool:
        return list(pool.map(remember, texts))


def load(name: str, port: int, world, clients: int, held) -> LoadFigures:
    """Warm-up texts, then the world's texts, timed; `held()`: the facts the server holds."""
    post_each(port, [f"Warm Up{i} knows Warm Start{i}." for i in range(WARM_UP_TEXTS)], "warm-up", clients)
    started = time.perf_counter()
    remember_ms = post_each(port, world.texts(), DATASET, clients)
    seconds = time.perf_counter() - started
    return LoadFigures(name, seconds, remember_ms, len(world.facts), held())


def our_held_facts(owner_url: str) -> int:
    return realistic_world.counts_of(owner_url)["edges"]


def load_ours(world, clients: int, workers: int, fakes) -> LoadFigures:
    """The world into our server on a fresh scratch database."""
    with reference.our_database(*fakes) as scratch, reference.worker_api(workers) as port:
        return load(f"ours ({workers}w)", port, world, clients, lambda: our_held_facts(scratch.owner_url))


def load_reference(world, clients: int, binary: str, directory: Path, run: reference.Stage) -> LoadFigures:
    """The world into a reference server on fresh stores in `directory`."""
    directory.mkdir()
    with reference.reference_server(binary, directory, run.proxy.url, run.authority.ca_file) as port:
        database = directory / reference.REFERENCE_DATABASE
        return load(
            reference.REFERENCE,
            port,
            world,
            clients,
            lambda: reference.reference_stored_facts(database, DATASET),
        )


def bench(
    binary: str, size: int, clients: int, workers: int, rounds: int, reference_first: bool
) -> list[tuple[LoadFigures, LoadFigures]]:
    """(ours, the reference's) per round, each load on fresh stores, the order turning every round."""
    world = realistic_world.generate(size)
    with reference.stage(reference.BothModels(), "gb-reference-load-") as run:
        results = []
        for round_ in range(rounds):
            figures: dict[str, LoadFigures] = {}
            order = ["ours", "reference"]
            if (round_ % 2 == 1) != reference_first:
                order.reverse()
            for name in order:
                figures[name] = (
                    load_ours(world, clients, workers, (run.anthropic, run.openai))
                    if name == "ours"
                    else load_reference(world, clients, binary, run.directory / f"reference-{round_}", run)
                )
            print_round(round_, order, figures, flush=True)
            results.append((figures["ours"], figures["reference"]))
        return results


def print_round(round_: int, order: list[str], figures: dict[str, LoadFigures], flush: bool = False) -> None:
    print(f"round {round_ + 1} ({' then '.join(order)}):", flush=flush)
    for name in order:
        print(figures[name].line(), flush=flush)
    ours, theirs = figures["ours"], figures["reference"]
    print(f"{'':<12}load rate ours/reference {theirs.seconds / ours.seconds:.2f}\n", flush=flush)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=realistic_world.size_of, default=10_000, help="facts (2k, 10k, ...)")
    parser.add_argument("--clients", type=int, default=4, help="remembers at a time")
    parser.add_argument("--workers", type=int, default=4, help="our worker processes per function")
    parser.add_argument("--rounds", type=int, default=2, help="loads of each, the order turning each round")
    parser.add_argument("--reference-first", action="store_true", help="load the reference first")
    parser.add_argument("--reference-binary", help="the reference's binary (default: gligabao-server's)")
    args = parser.parse_args()
    if args.workers < 1:
        parser.error("--workers must be 1 or more")
    binary = reference.reference_binary(args.reference_binary)
    reference.enter_private_network()
    texts = -(-args.size // realistic_world.FACTS_PER_TEXT)
    print(
        f"the realistic world of {args.size:,} facts ({texts} texts) through POST /v1/gb/remember, "
        f"{args.clients} clients, one dataset, instant fakes, each load on fresh stores\n"
    )
    print(f"{'server':<12}{'load s':>9}{'facts/s':>9}{'median ms':>11}{'p95 ms':>9}{'p95/med':>8}\n")
    results = bench(binary, args.size, args.clients, args.workers, args.rounds, args.reference_first)
    ratios = [theirs.seconds / ours.seconds for ours, theirs in results]
    spreads = [ours.p95() / statistics.median(ours.remember_ms) for ours, _ in results]
    print(
        f"load rate ours/reference, median of {len(results)} rounds: {statistics.median(ratios):.2f} "
        f"({', '.join(f'{r:.2f}' for r in ratios)}); our p95/median {', '.join(f'{r:.2f}' for r in spreads)}"
    )


if __name__ == "__main__":
    main()

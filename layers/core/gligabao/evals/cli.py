"""`gligabao eval SUITE --api URL [--out DIR] [--concurrency N]` and
`gligabao eval convert locomo|longmemeval SOURCE TARGET [--limit N]`. A bearer token is read from
GB_API_TOKEN, never from a flag (a flag shows in `ps` and in the shell's history)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gligabao.client.options import AUTH_HELP, DefaultsShown

EXIT_INTERRUPTED = 130
EXIT_USAGE = 2
USAGE = (
    "gligabao eval SUITE --api URL [options]\n"
    "       gligabao eval convert {locomo,longmemeval} SOURCE TARGET [--limit N]"
)
TOKEN_FLAG_REFUSED = (
    "a token is never a flag (it would show in ps and in your shell's history): "
    "put it in GB_API_TOKEN, e.g. GB_API_TOKEN=$(cat token.txt) gligabao eval ..."
)


class _TokenFlag(argparse.Action):
    """The --token of earlier versions: refused with what to do instead."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.exit(EXIT_USAGE, f"gligabao eval: {TOKEN_FLAG_REFUSED}\n")


def run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gligabao eval",
        usage=USAGE,
        formatter_class=DefaultsShown,
        description="Run a suite (JSON Lines of remembers and questions) against a running API with "
        '"eval": true, judge every answer, and write a report with every trajectory. '
        "`gligabao eval convert locomo|longmemeval SOURCE TARGET` makes a suite of a public benchmark "
        "(gligabao eval convert --help).",
    )
    parser.add_argument("suite", type=Path, help="the suite file (.jsonl)")
    parser.add_argument("--api", required=True, help="the API's base URL, e.g. http://127.0.0.1:7878")
    parser.add_argument(
        "--out", type=Path, default=None, help="the run's folder (default: eval-runs/<suite name>)"
    )
    parser.add_argument("--concurrency", type=int, default=4, help="calls at once")
    parser.add_argument("--auth", choices=["iam", "jwt", "none"], default=None, help=AUTH_HELP)
    parser.add_argument("--token", nargs="?", action=_TokenFlag, help=argparse.SUPPRESS)
    parser.add_argument(
        "--region", default=None, help="with --auth iam: the region (default: the URL's, else your profile's)"
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=2,
        help="retries of a call the API answers 429, 502, 503 or 504; then the item fails",
    )
    parser.add_argument("--judge-model", default=None, help="the judge's model (default: GB_LLM_MODEL)")
    parser.add_argument(
        "--retry-failed", action="store_true", help="on a resumed run, run the failed items again"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def convert_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gligabao eval convert",
        description="Convert a public benchmark's file into a suite",
        formatter_class=DefaultsShown,
    )
    parser.add_argument("benchmark", choices=["locomo", "longmemeval"])
    parser.add_argument("source", type=Path, help="locomo10.json, or longmemeval_s/_m/_oracle.json")
    parser.add_argument("target", type=Path, help="the suite to write (.jsonl)")
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="only the first N conversations (LoCoMo) or questions (default: all)",
    )
    return parser


def main(argv: list[str], *, api: Any = None, judge: Any = None) -> int:
    """`api` and `judge` replace the ones the options describe (tests)."""
    if argv[:1] == ["convert"]:
        return convert(convert_parser().parse_args(argv[1:]))
    return run(run_parser().parse_args(argv), api=api, judge=judge)


def convert(args: argparse.Namespace) -> int:
    from gligabao.evals.adapters.locomo import convert_locomo
    from gligabao.evals.adapters.longmemeval import convert_longmemeval
    from gligabao.evals.suite import QuestionItem, SuiteError, dump_suite

    converter = {"locomo": convert_locomo, "longmemeval": convert_longmemeval}[args.benchmark]
    try:
        items = converter(args.source, limit=args.limit)
    except SuiteError as error:
        print(f"gligabao eval convert: {error}", file=sys.stderr)
        return EXIT_USAGE
    args.target.parent.mkdir(parents=True, exist_ok=True)
    dump_suite(items, args.target)
    questions = sum(1 for item in items if isinstance(item, QuestionItem))
    datasets = len({item.dataset for item in items})
    print(
        f"{args.target}: {len(items) - questions} remembers and {questions} questions in {datasets} datasets"
    )
    return 0


def run(args: argparse.Namespace, *, api: Any = None, judge: Any = None) -> int:
    from gligabao.errors import GbError
    from gligabao.evals.report import OVERALL, REPORT_MARKDOWN, build_report, write_report
    from gligabao.evals.runner import run_suite
    from gligabao.evals.state import RunState, StateError
    from gligabao.evals.suite import SuiteError, load_suite

    if args.concurrency < 1 or args.retries < 0:
        print("gligabao eval: --concurrency must be at least 1 and --retries at least 0", file=sys.stderr)
        return EXIT_USAGE
    out = args.out or Path("eval-runs") / args.suite.stem
    try:
        _check_extra_installed()
        suite = load_suite(args.suite)
        judge = judge or _judge(args.judge_model)
        api = api or _api(args)
        state = RunState.open(
            out,
            args.suite,
            args.api,
            retry_failed=args.retry_failed,
            user_per_run=getattr(api, "names_user", True),
        )
    except (SuiteError, StateError, GbError, ValueError) as error:
        print(f"gligabao eval: {getattr(error, 'message', error)}", file=sys.stderr)
        return EXIT_USAGE
    finished = sum(1 for item in suite.items if state.done(item.id))
    if finished:
        print(f"resuming {out}: {finished} of {len(suite.items)} items already done", file=sys.stderr)
    progress = _progress(len(suite.items), finished, disabled=args.no_progress)
    interrupted = False
    try:
        run_suite(suite, api, judge, state, concurrency=args.concurrency, progress=progress)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        progress.close()
    report = build_report(suite, state.run, state.results)
    write_report(out, report)
    overall = report["accuracy"][OVERALL]
    accuracy = "-" if overall["accuracy"] is None else f"{overall['accuracy'] * 100:.1f}%"
    print(
        f"{overall['correct']} of {overall['questions']} questions right ({accuracy}), "
        f"{overall['failed']} failed, {report['remembers']['failed']} remembers failed; "
        f"report: {out / REPORT_MARKDOWN}"
    )
    if interrupted:
        print("interrupted: run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


def _check_extra_installed() -> None:
    import importlib.util

    missing = [name for name in ("tqdm", "matplotlib") if importlib.util.find_spec(name) is None]
    if missing:
        raise ValueError(f"{' and '.join(missing)} missing: install the eval extra (gligabao-memory[eval])")


def _judge(model: str | None):
    from gligabao.bootstrap import bundle
    from gligabao.evals.judge import LlmJudge

    # The composition root's LLM: the caller's provider key and settings (ANTHROPIC_API_KEY, ...).
    return LlmJudge(bundle().llm, model=model)


def _api(args: argparse.Namespace):
    from gligabao.bootstrap import bundle
    from gligabao.evals.client_api import client_api

    # As every command that calls the API: the token from GB_API_TOKEN (never a flag), --auth else GB_API_AUTH.
    settings = bundle().settings
    token = settings.mcp_api_token.get_secret_value() if settings.mcp_api_token is not None else None
    auth = args.auth or settings.mcp_api_auth
    return client_api(args.api, auth, token=token, region=args.region, retries=args.retries)


def _progress(total: int, finished: int, *, disabled: bool):
    from tqdm import tqdm

    return tqdm(
        total=total, initial=finished, unit="item", disable=disabled, file=sys.stderr, dynamic_ncols=True
    )

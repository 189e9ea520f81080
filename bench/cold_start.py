"""Cold-start benchmark of the Lambda handlers: how long `import app` takes in a fresh interpreter.

It builds the layer for this machine's platform with the layer's own Makefile (the same pip
install and compileall step as `sam build`, only without --platform), then, for every
functions/<name>/app.py, starts fresh python3.12 processes with only the environment a Lambda
function has (PYTHONPATH = <layer>/python:functions/<name>, the template's variables, no
credentials, no DATABASE_URL) and times the import of the handler module with its module-level
initialisation. The same again with the layer stripped of its .pyc files and
PYTHONDONTWRITEBYTECODE set (Lambda's filesystem is read-only: nothing gets cached), and the
import of `anthropic` alone for reference. With DATABASE_URL set, it also times a first
`handler(event, None)` call of GET /v1/gb/health in a fresh process.

Figures only, no assertions: the target is at most 500 ms per handler with the .pyc files.

    python bench/cold_start.py [--runs 5] [--layer DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MS = 500.0

# What the template gives every function (values are placeholders: import must not use them).
LAMBDA_ENV = {
    "GB_SECRETS_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:gligabao/provider-keys-AbCdEf",
    "GB_DB_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:gligabao/database-AbCdEf",
    "GB_DB_HOST": "gligabao-proxy.proxy-abcdefghijkl.us-east-1.rds.amazonaws.com",
    "GB_DB_NAME": "gligabao",
    "GB_LLM_PROVIDER": "anthropic",
    "GB_LLM_MODEL": "claude-haiku-5-5",
    "GB_EMBEDDING_MODEL": "text-embedding-3-small",
    "GB_EMBEDDING_DIMENSIONS": "1536",
    "GB_GEO": "off",
    "GB_GEO_RESOLVER": "local",
    "GB_PLACE_INDEX": "",
    "GB_GEO_RADIUS_KM": "50",
    "GB_DATA_DIR": "/tmp/gligabao",
    "POWERTOOLS_SERVICE_NAME": "gligabao",
    "POWERTOOLS_METRICS_NAMESPACE": "gligabao",
}

PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
import {module}
t1 = time.perf_counter()
out = {{"import_ms": (t1 - t0) * 1000, "modules": len(sys.modules)}}
if {call_health}:
    event = {{
        "version": "2.0", "routeKey": "ANY /v1/gb/health", "rawPath": "/v1/gb/health", "rawQueryString": "",
        "headers": {{"host": "localhost"}}, "isBase64Encoded": False,
        "requestContext": {{"accountId": "123456789012", "apiId": "local", "domainName": "localhost",
            "http": {{"method": "GET", "path": "/v1/gb/health", "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1",
                     "userAgent": "bench"}},
            "requestId": "bench", "routeKey": "ANY /v1/gb/health", "stage": "$default",
            "time": "01/Jan/2025:00:00:00 +0000", "timeEpoch": 1735689600000}},
    }}
    t2 = time.perf_counter()
    try:
        reply = {module}.handler(event, None)
        out["status"] = reply.get("statusCode")
    except Exception as exc:
        out["error"] = type(exc).__name__ + ": " + str(exc)[:200]
    out["first_call_ms"] = (time.perf_counter() - t2) * 1000
print("BENCH " + json.dumps(out))
"""


def python312() -> str:
    """A Python 3.12 outside any virtual environment (the layer alone must be enough)."""
    found = subprocess.run(
        ["bash", str(ROOT / "infra/find-python.sh")], check=False, capture_output=True, text=True
    )
    candidates = (
        os.environ.get("BENCH_PYTHON"),
        found.stdout.strip(),
        shutil.which("python3.12"),
        sys.executable,
    )
    for candidate in filter(None, candidates):
        try:
            info = subprocess.run(
                [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2], sys._base_executable)"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
        except (OSError, subprocess.CalledProcessError):
            continue
        if info and info[0] == "3.12":
            return info[1]
    sys.exit("cold_start: needs Python 3.12 (the Lambda runtime); set BENCH_PYTHON")


def build_layer(python: str, dest: Path) -> Path:
    """The layer for this machine's platform, byte-compiled like the real one."""
    env = {**os.environ, "PATH": f"{Path(python).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-s",
            "-f",
            str(ROOT / "layers/core/Makefile"),
            "build-CoreLayer",
            "PLATFORM=",
            f"ARTIFACTS_DIR={dest}",
            f"PYTHON={python}",
        ],
        env=env,
        check=False,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"cold_start: the layer build failed:\n{done.stdout}{done.stderr}")
    return dest


def without_pyc(layer: Path, dest: Path) -> Path:
    shutil.copytree(layer, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def lambda_env(
    python: str, function_dir: Path | None, layer: Path, name: str, database_url: str | None
) -> dict:
    path = [str(layer / "python")] + ([str(function_dir)] if function_dir else [])
    env = {
        "PATH": f"{Path(python).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "en_US.UTF-8",
        "TZ": ":UTC",
        "HOME": tempfile.gettempdir(),
        "PYTHONPATH": os.pathsep.join(path),
        "PYTHONDONTWRITEBYTECODE": "1",  # read-only filesystem: nothing compiled is kept
        "LAMBDA_TASK_ROOT": str(function_dir or layer),
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.12",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": f"gligabao-{name}",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
        "AWS_LAMBDA_FUNCTION_VERSION": "1",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/gligabao-{name}",
        **LAMBDA_ENV,
    }
    if database_url:
        # The first call reaches the database; no secret to fetch (no credentials here).
        env.update({"DATABASE_URL": database_url, "GB_SECRETS_ARN": "", "GB_DB_SECRET_ARN": ""})
    return env


def probe(python: str, env: dict, module: str, call_health: bool = False) -> dict:
    code = PROBE.format(module=module, call_health=call_health)
    # -S: no site-packages of this machine, only the standard library and PYTHONPATH (the layer and
    # the function), so a dependency missing from the layer shows up as an error here.
    done = subprocess.run(
        [python, "-S", "-c", code], env=env, check=False, capture_output=True, text=True, timeout=120
    )
    for line in done.stdout.splitlines():
        if line.startswith("BENCH "):
            return json.loads(line[6:])
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": tail[:200]}


def measure(python: str, env: dict, module: str, runs: int) -> dict:
    results = [probe(python, env, module) for _ in range(runs)]
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        return {"error": errors[0]}
    times = [r["import_ms"] for r in results]
    return {
        "min": min(times),
        "median": statistics.median(times),
        "max": max(times),
        "modules": results[-1]["modules"],
    }


def fmt(stats: dict, key: str) -> str:
    return "error" if "error" in stats else f"{stats[key]:8.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per measurement (default 5)")
    parser.add_argument(
        "--layer", type=Path, help="an already built host-platform layer (its python/ inside)"
    )
    args = parser.parse_args()

    python = python312()
    functions = sorted(p.parent for p in (ROOT / "functions").glob("*/app.py"))
    database_url = os.environ.get("DATABASE_URL")

    with tempfile.TemporaryDirectory(prefix="gb-cold-start-") as tmp:
        tmp = Path(tmp)
        if args.layer:
            layer = args.layer
        else:
            print(f"building the layer for this platform with {python} ...", flush=True)
            layer = build_layer(python, tmp / "layer")
        bare = without_pyc(layer, tmp / "layer-no-pyc")

        print(
            f"\nimport of the handler module in a fresh {python} (ms, {args.runs} runs each; "
            f"target <= {TARGET_MS:.0f} ms with .pyc)\n"
        )
        header = f"{'function':<12} {'min':>8} {'median':>8} {'max':>8} | {'no .pyc: min':>12} {'median':>8} {'max':>8} | modules"
        print(header)
        print("-" * len(header))
        worst = 0.0
        rows = [(f.name, f, "app") for f in functions] + [("(anthropic)", None, "anthropic")]
        for name, function_dir, module in rows:
            env = lambda_env(python, function_dir, layer, name, None)
            env_bare = lambda_env(python, function_dir, bare, name, None)
            with_pyc = measure(python, env, module, args.runs)
            no_pyc = measure(python, env_bare, module, args.runs)
            if function_dir is not None and "error" not in with_pyc:
                worst = max(worst, with_pyc["median"])
            flag = ""
            if "error" in with_pyc:
                flag = f"  ! {with_pyc['error']}"
            elif function_dir is not None and with_pyc["median"] > TARGET_MS:
                flag = "  ! over target"
            print(
                f"{name:<12} {fmt(with_pyc, 'min')} {fmt(with_pyc, 'median')} {fmt(with_pyc, 'max')} | "
                f"{fmt(no_pyc, 'min'):>12} {fmt(no_pyc, 'median')} {fmt(no_pyc, 'max')} | "
                f"{with_pyc.get('modules', '-')}{flag}"
            )
        if not functions:
            print("(no functions/<name>/app.py yet)")
        else:
            verdict = "within" if worst <= TARGET_MS else "OVER"
            print(f"\nslowest handler median: {worst:.0f} ms ({verdict} the {TARGET_MS:.0f} ms target)")

        system = ROOT / "functions/system"
        if not database_url:
            print("\nfirst GET /v1/gb/health call: skipped (DATABASE_URL is not set)")
        elif not (system / "app.py").exists():
            print("\nfirst GET /v1/gb/health call: skipped (functions/system/app.py does not exist yet)")
        else:
            env = lambda_env(python, system, layer, "system", database_url)
            result = probe(python, env, "app", call_health=True)
            if "first_call_ms" in result:
                outcome = result.get("error") or f"HTTP {result.get('status')}"
                print(
                    f"\nfirst GET /v1/gb/health call (fresh process, after a {result['import_ms']:.0f} ms import): "
                    f"{result['first_call_ms']:.0f} ms, {outcome}"
                )
            else:
                print(f"\nfirst GET /v1/gb/health call: failed ({result.get('error')})")


if __name__ == "__main__":
    main()

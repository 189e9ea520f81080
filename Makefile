# The two commands: `make serve` (local API on the embedded PostgreSQL) and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell infra/find-python.sh)
VENV := .venv
TOOLS := .venv-tools
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 7878

.PHONY: docs rds-ca install serve explore browser explorer-screenshot bench-explorer test test-unit test-history fuzz pytest lint-template tools build migrate openapi statement-functions bench bench-remember bench-idempotency bench-query bench-fuzz clean bench-load bench-row-security bench-ingest bench-trajectory bench-retrieval-quality bench-retrieval-worlds bench-overhead bench-reference bench-reference-load bench-reference-features bench-world bench-world-query bench-world-remember bench-offline

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml layers/core/requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[server,local,test,mcp,eval,docs]'
	touch $@

serve: install
	$(BIN)/gligabao serve --host $(HOST) --port $(PORT) $(if $(WORKERS),--workers $(WORKERS))

# The memory explorer on http://127.0.0.1:7879, against `make serve` (EXPLORE_API= for another API).
EXPLORE_API ?= http://$(HOST):$(PORT)
explore: install
	$(BIN)/gligabao explore --api $(EXPLORE_API)

migrate: install
	$(BIN)/gligabao migrate

openapi: install
	$(BIN)/gligabao openapi

# The migration of the query's statement functions changed in db/graph_reads.py (test_statement_functions.py).
statement-functions: install
	$(BIN)/python infra/statement_functions.py

# The explorer's browser tests drive Debian's Chromium (not Playwright's download): installed once.
browser:
	@test -x /usr/bin/chromium || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium; }

# The README's picture of the explorer, made by its screenshot test.
explorer-screenshot: install browser
	EXPLORER_SCREENSHOT=docs/explorer.png $(BIN)/python -m pytest -q tests/e2e/test_explorer.py -k screenshot

# The explorer's page on synthetic graphs of 500, 2,000 and 5,000 edges: layout and redraw times.
bench-explorer: install browser
	$(BIN)/python bench/explorer.py --sizes 500,2000,5000

# The suite runs in TEST_WORKERS processes (pytest-xdist), each test file on one of them: every
# worker has a test database of its own in the shared embedded PostgreSQL. On the 2-core machine
# two workers took 441 s against 665 s for one (1,997 tests). TEST_WORKERS=0: one process.
TEST_WORKERS ?= 2
PYTEST_WORKERS = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

# The template's lint, ruff (lint and format), the documentation site (`make docs`), then every
# test: unit, integration, end-to-end. The three installs are independent: side by side they take
# about half the time (63 s against 113 s on a fresh clone, measured on the 2-core machine). The
# tests run on the embedded PostgreSQL 18 (production runs 17); `make pytest GB_POSTGRES_VERSION=16`
# runs them again on 16 (.ci/run does).
test:
	$(MAKE) -j3 install tools browser
	$(MAKE) lint-template
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MAKE) docs
	$(BIN)/python -m pytest -q $(PYTEST_WORKERS)

# The documentation site from docs/ into var/site (mkdocs.yml): --strict, so a broken link, a missing
# anchor or a page left out of the navigation fails it; openapi.json is generated from the routes.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir var/site

# The history rule's properties (tests/unit/test_fact_history_rule.py, tests/integration/
# test_history_properties.py) with many more random histories than `make test` tries: about 7 minutes.
test-history: install
	HYPOTHESIS_PROFILE=long $(BIN)/python -m pytest -q tests/unit/test_fact_history_rule.py tests/integration/test_history_properties.py

# The unit tests only (tests/unit): no database, no HTTP; a few seconds.
test-unit: install
	$(BIN)/python -m pytest -q tests/unit

pytest: install browser
	$(BIN)/python -m pytest -q $(PYTEST_WORKERS)

# The SAM CLI and cfn-lint pin other versions of boto3 and pydantic than the layer: own environment.
tools: $(TOOLS)/.installed

$(TOOLS)/.installed: infra/tools-requirements.txt
	test -x $(TOOLS)/bin/python || $(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install -q --upgrade pip
	$(TOOLS)/bin/python -m pip install -q -r infra/tools-requirements.txt
	touch $@

# Amazon RDS's certificate authorities (GB_DB_CA=rds, the development profile) from AWS's own
# bundle, in place of the shipped copy.
rds-ca:
	curl -fsS https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem -o layers/core/gligabao/db/rds-ca-bundle.pem

lint-template: tools
	$(TOOLS)/bin/cfn-lint template.yaml
	AWS_DEFAULT_REGION=$${AWS_DEFAULT_REGION:-us-east-1} SAM_CLI_TELEMETRY=0 $(TOOLS)/bin/sam validate --lint --template template.yaml

# `sam build` without a container: the layer's Makefile (layers/core/Makefile) has pip fetch the
# Lambda platform's wheels (manylinux aarch64, CPython 3.12) and compiles them with python3.12,
# which must be the first python3.12 on PATH: the one of $(PYTHON) is put first.
build: tools
	PATH="$$(dirname "$$($(PYTHON) -c 'import sys; print(sys.executable)')"):$$PATH" \
	AWS_DEFAULT_REGION=$${AWS_DEFAULT_REGION:-us-east-1} SAM_CLI_TELEMETRY=0 $(TOOLS)/bin/sam build

bench: install
	$(BIN)/python bench/cold_start.py

bench-remember: install
	$(BIN)/python bench/remember.py

bench-idempotency: install
	$(BIN)/python bench/idempotency.py

# remember and query with "eval" off and on (the trajectory's cost), and the no-op recorder's; about a minute.
bench-trajectory: install
	$(BIN)/python bench/trajectory_overhead.py

# One query and one remember broken down part by part, over HTTP and in-process (200 runs each; about 1.5 minutes).
bench-overhead: install
	$(BIN)/python bench/overhead.py

# A 200 KB document and a batch of 100 texts through the asynchronous path (about 12 minutes:
# the fake providers answer in 1-3 s per call, and one dataset's jobs run one at a time).
bench-ingest: install
	$(BIN)/python bench/ingest.py

# Builds 10k/100k/1M-edge datasets the first time (about 25 minutes for 1M on 2 cores), kept in var/bench-pgdata.
bench-query: install
	$(BIN)/python bench/query.py --sizes 10k,100k,1m --queries 300 --recall-queries 40

# The realistic world (bench/realistic_world.py) loaded through the API, 2k, 10k and 100k facts, kept in
# var/bench-realistic-pgdata (autovacuum off), by the bulk import or (WORLD_VIA=remember) one text per
# remember, 4 at a time. On the loaded 2-core machine 10k took 1,220 s by the bulk import and 76 s one
# text per remember, whose rate fell to about 20 facts/s past 15k (docs/performance.md, realistic
# world). WORLD_SIZES= for fewer. Then its queries and its remembers of 50 new facts.
WORLD_SIZES ?= 2k,10k,100k
WORLD_VIA ?= batch
bench-world: install
	$(BIN)/python bench/realistic_world.py --sizes $(WORLD_SIZES) --via $(WORLD_VIA)

bench-world-query: install
	$(BIN)/python bench/query.py --world realistic --sizes $(WORLD_SIZES)

bench-world-remember: install
	$(BIN)/python bench/remember.py --world realistic --sizes $(WORLD_SIZES)

# The same retrievals and remembers alternately as the tables' owner and as gligabao_app.
bench-row-security: install
	$(BIN)/python bench/row_security.py

# 32 concurrent clients, remember and query mixed, for 60 s against the local API in its own process.
bench-load: install
	$(BIN)/python bench/load.py --clients 32 --seconds 60

# The benches of one cost each, run with their own defaults: bench-NAME runs bench/NAME.py (dashes
# for underscores); each script's docstring says what it measures and its options (docs/performance.md
# and the API pages quote them). bench-query-as-of and bench-export read the 100k database of
# bench/query.py at 256 dimensions (build it first: `bench/query.py --sizes 100k --dims 256`).
SIMPLE_BENCHES := memory entity-touch fact-candidates prepared-rows statement-functions context-rows query-as-of export erase-user forget job-guard geo-nearby ontology provider-deadline
.PHONY: $(addprefix bench-,$(SIMPLE_BENCHES))
$(addprefix bench-,$(SIMPLE_BENCHES)): bench-%: install
	$(BIN)/python bench/$(subst -,_,$*).py

# Schemathesis from the OpenAPI document against the local API, round after round for FUZZ_MINUTES
# (5): the responses per endpoint and status, and every failure (make test runs one bounded round).
FUZZ_MINUTES ?= 5
fuzz: install
	$(BIN)/python bench/fuzz.py --minutes $(FUZZ_MINUTES)

bench-fuzz: fuzz

# Retrieval quality offline: a world of ~2,000 facts remembered with scripted extractions and real
# sentence embeddings (all-MiniLM-L6-v2, shipped in a package), 150 questions, seed and ranked
# retrieval side by side, then the threshold sweeps. Its own environment (the `bench` extra, which
# `make test` never installs): Python 3.11, whose CPU build of torch this machine holds. The world
# is remembered once (about half a minute on 2 cores) and kept in var/bench-quality-pgdata.
BENCH_VENV := .venv-bench
BENCH_PYTHON ?= python3.11

$(BENCH_VENV)/.installed: pyproject.toml layers/core/requirements.txt
	test -x $(BENCH_VENV)/bin/python || $(BENCH_PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install -q torch==2.13.0
	$(BENCH_VENV)/bin/python -m pip install -q -e '.[server,local,bench]'
	touch $@

# The offline extractor's triple precision and recall on its own corpus (docs/providers.md).
bench-offline: install
	$(BIN)/python bench/offline_extractor.py

bench-retrieval-quality: $(BENCH_VENV)/.installed
	HF_HUB_OFFLINE=1 $(BENCH_VENV)/bin/python bench/retrieval_quality.py

bench-retrieval-worlds: $(BENCH_VENV)/.installed
	HF_HUB_OFFLINE=1 $(BENCH_VENV)/bin/python bench/retrieval_quality.py --world all

# Our server beside the reference server (gligabao-server 0.108.1, the Go server this service ports),
# measured interleaved in one run, every process in a network namespace of its own with only
# loopback (as root: `unshare -n`). Its own environment: the `reference` extra, which `make test`
# never installs, and pytest (the fake providers' helpers import it).
REFERENCE_VENV := .venv-reference

$(REFERENCE_VENV)/.installed: pyproject.toml layers/core/requirements.txt
	test -x $(REFERENCE_VENV)/bin/python || $(PYTHON) -m venv $(REFERENCE_VENV)
	$(REFERENCE_VENV)/bin/python -m pip install -q pytest -e '.[local,reference]'
	touch $@

bench-reference: $(REFERENCE_VENV)/.installed
	$(REFERENCE_VENV)/bin/python bench/reference.py

bench-reference-load: $(REFERENCE_VENV)/.installed
	$(REFERENCE_VENV)/bin/python bench/reference_load.py

bench-reference-features: $(REFERENCE_VENV)/.installed
	$(REFERENCE_VENV)/bin/python bench/reference_features.py

clean:
	rm -rf $(VENV) $(TOOLS) $(BENCH_VENV) $(REFERENCE_VENV) .aws-sam

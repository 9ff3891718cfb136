# Cardroom — the two commands a fresh machine needs: `make run` and `make test`.
# Everything else (venv, protos, the Kafka broker) is built on demand by these targets.

SHELL      := /bin/bash
PYTHON     ?= python3
VENV       := .venv
PY         := $(VENV)/bin/python
PIP        := $(VENV)/bin/pip
STAMP      := $(VENV)/.installed
PROTO_SRC  := $(wildcard protos/cardroom/v1/*.proto)
PROTO_OUT  := services/cardroom/v1
PROTO_STAMP:= $(PROTO_OUT)/.generated
PYTEST_ARGS?=

.PHONY: web help venv protos lint lint-python lint-protos test test-fast chaos stress run bench loadtest kafka-start kafka-stop kafka-fetch clean monitoring tools k8s-render

help:
	@echo "make run     start Kafka and the services, print addresses; Ctrl-C stops everything"
	@echo "make test    the whole suite (creates .venv, generates protos, starts/stops Kafka)"
	@echo "make test-fast  the rules core and the in-process fast tier, no services (under a minute)"
	@echo "make chaos      the chaos test alone: every service and the broker killed -9 in turn under bots (in make test too)"
	@echo "make stress     tournaments on the dealer with the services killed at random moments, many seeds (STRESS_ARGS=--help; not in make test)"
	@echo "make lint    ruff (format check + lint), mypy (strict for the core), buf lint for protos/"
	@echo "make bench   benchmarks side by side with reference libraries (ratios)"
	@echo "make loadtest  the default load-test scenario against a make-run stack it starts (GATEWAY=HOST:PORT: a running one)"
	@echo "make protos  regenerate the protobuf / gRPC Python code"
	@echo "make web     build the browser client into web/dist (npm ci + buf generate + vite build)"
	@echo "make monitoring  regenerate the Grafana dashboards JSON and the k8s PrometheusRule/dashboards"
	@echo "make tools   install prometheus/promtool and kustomize when missing (scripts/install-tools.sh)"
	@echo "make k8s-render  print the rendered manifests of OVERLAY (default dev)"

# The virtual environment, from the exact pins in the lock files.
$(STAMP): requirements.lock requirements-dev.lock pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --disable-pip-version-check -r requirements-dev.lock
	$(PIP) install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $@

venv: $(STAMP)

# Generated code goes to services/cardroom/v1 (git-ignored).
$(PROTO_STAMP): $(STAMP) $(PROTO_SRC)
	@mkdir -p $(PROTO_OUT)
	@rm -f $(PROTO_OUT)/*_pb2*.py $(PROTO_OUT)/*_pb2*.pyi
	@if [ -n "$(PROTO_SRC)" ]; then \
	  $(PY) -m grpc_tools.protoc -I protos --python_out=services --pyi_out=services \
	    --grpc_python_out=services $(PROTO_SRC); fi
	@touch $(PROTO_OUT)/__init__.py $@

protos: $(PROTO_STAMP)

# In parallel (pytest-xdist), whole files per worker (module fixtures, fixed-port infra tests stay
# together), the whole-card-room tests first and one at a time (tests/scheduling.py); every worker has
# its own Kafka broker (port + 2 * worker) and PostgreSQL cluster.
# TEST_WORKERS=0 runs in one process. The Kafka jars are fetched first, once: workers starting their
# brokers at the same time on a fresh clone would otherwise download into the same directory.
TEST_WORKERS ?= 2
test: $(PROTO_STAMP)
	@set -o pipefail; rc=0; \
	if [ "$(TEST_WORKERS)" != 0 ]; then deploy/kafka/kafka.sh fetch || exit $$?; fi; \
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS) || rc=$$?; \
	port=$${CARDROOM_TEST_KAFKA_PORT:-19092}; \
	for i in $$(seq 0 $$(( $(TEST_WORKERS) > 1 ? $(TEST_WORKERS) - 1 : 0 ))); do \
	  p=$$((port + 2 * i)); KAFKA_PORT=$$p KAFKA_STATE_DIR=var/kafka-test-$$p \
	    deploy/kafka/kafka.sh stop >/dev/null 2>&1 || true; done; \
	if [ $$rc -eq 5 ]; then echo "make test: no tests were collected — that is a failure"; fi; \
	exit $$rc

# The lint gate: every tool runs and reports; the target fails if any of them found something.
# Tools are pinned: ruff and mypy in requirements-dev.lock, buf in scripts/install-buf.sh.
lint: $(PROTO_STAMP)
	@rc=0; \
	echo "== ruff format --check"; $(VENV)/bin/ruff format --check . || rc=1; \
	echo "== ruff check"; $(VENV)/bin/ruff check . || rc=1; \
	echo "== mypy (strict for services/cardroom/core)"; $(VENV)/bin/mypy || rc=1; \
	echo "== buf lint"; buf=$$(scripts/install-buf.sh) && $$buf lint && echo "buf lint: no findings" || rc=1; \
	exit $$rc

lint-python: $(PROTO_STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

lint-protos:
	$$(scripts/install-buf.sh) lint

# The fast tier: the rules core and in-process tests with in-memory fakes (tests/fast/**), no
# Kafka, no PostgreSQL, no service processes; the slow exhaustive core checks stay in `make test`.
# The chaos test (issue 14): make run's card room with every service and the broker killed -9 in turn
# under bots (~3 min), alone; make test runs it too (tests/e2e/test_chaos.py).
chaos: $(PROTO_STAMP)
	$(PY) -m pytest -s tests/e2e/test_chaos.py $(PYTEST_ARGS)

# Tournaments on the dealer with the dealer and the tournament service killed at random moments, many
# seeds of the fast tier's in-process harness (tests/stress/tournaments_on_the_dealer.py; a few minutes).
stress: $(PROTO_STAMP)
	$(PY) -m tests.stress.tournaments_on_the_dealer $(STRESS_ARGS)

FAST_PATHS := tests/core tests/fast tests/test_layers.py tests/test_docs.py
FAST_WORKERS ?= 2
test-fast: $(PROTO_STAMP)
	$(PY) -m pytest -n $(FAST_WORKERS) -m "not slow and not kafka" $(FAST_PATHS) $(PYTEST_ARGS)

run: $(PROTO_STAMP)
	$(PY) scripts/run.py $(RUN_ARGS)

# The browser client (web/): npm ci when its lock changed, then buf generate + tsc + vite build.
web:
	scripts/build-web.sh

bench: $(PROTO_STAMP)
	$(VENV)/bin/cardroom bench

monitoring: $(STAMP)
	$(PY) scripts/gen_monitoring.py

tools:
	scripts/install-tools.sh all

OVERLAY ?= dev
k8s-render:
	@scripts/install-tools.sh kustomize
	@if command -v kubectl >/dev/null; then kubectl kustomize deploy/k8s/overlays/$(OVERLAY); \
	else "$$(command -v kustomize || echo .cache/bin/kustomize)" build deploy/k8s/overlays/$(OVERLAY); fi

# The default load test: cash 6-max tables with think times against a `make run` stack started for it
# (or GATEWAY=HOST:PORT, a running one with the default metrics ports); the report goes to var/loadtest/.
LOADTEST_ARGS ?= --scenario cash --tables 50 --ramp 20 --steady 60 --slo errors=0 --slo imbalance=0 --slo escrow_vs_stacks=0 --slo balance_drift=0
LOADTEST_STACK ?= --start-stack --kafka-port $${KAFKA_PORT:-9092}
loadtest: $(PROTO_STAMP)
	$(PY) -m cardroom.cli.main loadtest $(if $(GATEWAY),--gateway $(GATEWAY),$(LOADTEST_STACK)) $(LOADTEST_ARGS)

kafka-fetch:
	deploy/kafka/kafka.sh fetch

kafka-start: $(STAMP)
	deploy/kafka/kafka.sh start

kafka-stop:
	deploy/kafka/kafka.sh stop

clean:
	rm -rf $(PROTO_OUT) .pytest_cache

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

.PHONY: help venv protos test run bench loadtest kafka-start kafka-stop kafka-fetch clean

help:
	@echo "make run     start Kafka and the services, print addresses; Ctrl-C stops everything"
	@echo "make test    the whole suite (creates .venv, generates protos, starts/stops Kafka)"
	@echo "make bench   benchmarks side by side with reference libraries (ratios)"
	@echo "make loadtest  the default load-test scenario against a make-run stack it starts (GATEWAY=HOST:PORT: a running one)"
	@echo "make protos  regenerate the protobuf / gRPC Python code"

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

test: $(PROTO_STAMP)
	@set -o pipefail; rc=0; \
	$(PY) -m pytest $(PYTEST_ARGS) || rc=$$?; \
	port=$${CARDROOM_TEST_KAFKA_PORT:-19092}; KAFKA_PORT=$$port KAFKA_STATE_DIR=var/kafka-test-$$port \
	  deploy/kafka/kafka.sh stop >/dev/null 2>&1 || true; \
	if [ $$rc -eq 5 ]; then echo "make test: no tests were collected — that is a failure"; fi; \
	exit $$rc

run: $(PROTO_STAMP)
	$(PY) scripts/run.py $(RUN_ARGS)

bench: $(PROTO_STAMP)
	$(VENV)/bin/cardroom bench

# The default load test: cash 6-max tables with think times against a `make run` stack started for it
# (or GATEWAY=HOST:PORT, a running one with the default metrics ports); the report goes to var/loadtest/.
LOADTEST_ARGS ?= --scenario cash --tables 50 --ramp 20 --steady 60 --slo errors=0 --slo imbalance=0 --slo balance_drift=0
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

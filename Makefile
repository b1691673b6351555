# hbase-migrate: every target does its own set-up on a fresh machine.
#   make run     the main job on the embedded stack (ZooKeeper + minicluster + WALs)
#   make test    the whole test suite (unit, golden, fuzz, integration with real parts)
#   make lint    ruff, mypy --strict on the core, the plugins, the DAGs, minihbase,
#                realstack and stackprocs, import-linter's contracts (imports run one
#                way) and no test injecting a part into a client by assignment
#                (scripts/check_injection.py)
#   make bench   the benchmarks (figures, no pass/fail)
#   make soak    a 2-minute chaos soak through the command line (a fixed seed), then a
#                15-minute one through Airflow on the embedded stack (ARGS=--seed S)
#   make soak-crash  the migration's own commands SIGKILLed 50 times at seeded points on the
#                embedded stack, each run again, the invariants checked; the CDC stream too
#                when a Kafka broker starts (realstack's, from Maven; else left out, said
#                in one line); then the start, replay, validate and cutover DAGs' task
#                processes killed on a LocalExecutor and a Celery Airflow of their own;
#                summary in state/soak-crash/summary.json (ARGS="--seed S --kills N")
#   make soak-crash-real  the crash harness's shorter run on a real HBase 2.6.1 pair (18 kills)
#   make sweep-1x  the HBase 1.x source tests and lifecycle on the other 1.x lines (a stack each)
#   make sweep-2x  the no-gateway lifecycle and the conformance suite on other 2.x releases
#   make sweep-3x  the lifecycle from 2.6.1 and from 3.x onto HBase 3 (and from 2.6.1 with
#                Kerberos at privacy), the conformance suite on it
#   make conformance-clients  clients no one here wrote (HBase's Java client, hbase-driver)
#                on real HBase 2.6.1 alone, the judge of the embedded cluster
#   make sweep-secure  the no-gateway lifecycle between Kerberos-secured stacks: at privacy
#                with one KDC, then in two realms without a trust (two secured stacks each)
#   make test-loaded  the WAL coverage, replay and live Airflow tests 10 times in a row with
#                4 CPU hogs beside them (ROUNDS=, HOGS=, LOADED=modules)
#   make screenshots  docs/report.png and docs/dag-graph.png, in headless Chromium
#   make golden-hfiles  the golden HFiles of tests/data/real-hfile*, written by real HBase 2.6.1,
#                3.0.0-alpha-4 and 1.4.13
#   make golden-mob  the golden MOB snapshots of tests/data/real-mob and real-mob-encoded (its
#                families encoded: compressed tags, cell TTLs), written by real HBase 2.6.1
#   make docs    the docs site (MkDocs, strict: a broken link fails) into build/site
#   make package-check  the built wheel installed alone into a fresh venv: --version, the
#                provider's hooks and every DAG import (AIRFLOW=X.Y.Z: beside that Airflow)
#   make package-matrix  package-check beside the oldest and the newest Airflow claimed

SHELL        := /bin/bash
PYTHON       ?= python3
UV_VERSION   := 0.13.9
TOOLS        := .tools
UV           := $(TOOLS)/bin/uv
VENV         := .venv
BIN          := $(VENV)/bin
PYTEST_ARGS  ?=
ARGS         ?=

export UV_PROJECT_ENVIRONMENT := $(VENV)
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: setup system-deps docs-assets test test-stacks lint run soak soak-crash soak-crash-real bench screenshots clean sweep-1x sweep-2x \
	conformance-clients \
	sweep-3x sweep-secure

setup: $(VENV)/.installed docs-assets speedups

# the compiled hot loops (Cython: WAL reader, CDC renderer); the pure-Python ones run where missing.
# Then the project's bytecode: every command and Airflow task would otherwise compile its
# sources again when the environment forbids writing it (PYTHONDONTWRITEBYTECODE).
.PHONY: speedups
speedups: $(VENV)/.installed
	@$(BIN)/python scripts/build-speedups.py
	@$(BIN)/python -m compileall -q -j 0 hbase_migrate hbase_migrate_airflow minihbase realstack stackprocs dags spark_apps

# the web assets of the validation's Data Docs, from the npm registry (renders offline)
docs-assets: | system-deps
	@scripts/docs-assets.sh

system-deps:
	@scripts/system-deps.sh build

$(UV):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || \
		{ echo "Python 3.11 is required ($(PYTHON) is $$($(PYTHON) -V))"; exit 1; }
	@$(PYTHON) -m venv $(TOOLS)
	@$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

$(VENV)/.installed: pyproject.toml uv.lock $(UV) | system-deps
	@echo "installing the locked packages into $(VENV) (uv sync, once; a minute or two)"
	@$(UV) sync --quiet --frozen --all-extras --compile-bytecode --python $(PYTHON)
	@touch $@

# Three workers side by side (pytest-xdist), each test with those sharing its heavy fixtures
# (tests/conftest.py: worker_group); TEST_WORKERS=0 runs them in this one process. On 2 cores
# a third worker fills the time the others wait on servers: make test took 24 min with two,
# 18 with three (every test's time in build/test-durations-*.json).
# `make test` runs every test on the session's shared stacks; `make test-stacks` the modules
# that start clusters of their own (marked own_stack: Spark and Celery clusters of separate
# workers, HBase 1.x, two realms, Bigtable beside real HBase, two native clusters under
# faults). `.ci/run` runs both.
TEST_WORKERS ?= 3
# pytest keeps each test module as it rewrote its asserts (in __pycache__, git-ignored) even
# where the environment forbids writing bytecode (PYTHONDONTWRITEBYTECODE): otherwise every
# worker of every run rewrites all 460 test modules again, 16 s of one core each time.
PYTEST = PYTHONDONTWRITEBYTECODE= $(BIN)/pytest
XDIST = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder)
test: setup
	@scripts/system-deps.sh test
	$(PYTEST) $(XDIST) -m "not own_stack" $(PYTEST_ARGS)

test-stacks: setup
	@scripts/system-deps.sh test
	$(PYTEST) $(XDIST) -m own_stack $(PYTEST_ARGS)

# The real YARN's module alone (realstack's: a ResourceManager with a staging HDFS, two
# NodeManagers; a migration's snapshot copy, replay and validation on it): 4 to over 10
# minutes on 2 cores. `make test-stacks` runs it too, beside the other modules.
YARN_TESTS = tests/spark/test_yarn.py
.PHONY: test-yarn
test-yarn: setup
	@scripts/system-deps.sh test
	$(PYTEST) -m own_stack $(YARN_TESTS) $(PYTEST_ARGS)

# `make test` runs tests/realstack/test_hbase1_real.py on HBase 1.4.13; this runs it on the
# other 1.x lines that start on Java 17 (SWEEP_1X=...), each on its own Hadoop.
SWEEP_1X     ?= 1.2.6,1.7.2
sweep-1x: setup
	@scripts/system-deps.sh test
	HBASE_MIGRATE_REAL_HBASE1_VERSIONS=$(SWEEP_1X) $(PYTEST) -p no:cacheprovider \
		tests/realstack/test_hbase1_real.py tests/realstack/test_hbase1_lifecycle_real.py \
		$(PYTEST_ARGS)

# `make test` runs the native lifecycle with no gateway and the conformance suite on HBase
# 2.6.1; this runs both on the other 2.x releases whose server jars the mirror holds
# (SWEEP_2X=...): the conformance suite over both transports where it holds hbase-thrift of
# the version too (2.5.8, 2.4.17), else the native transport judged by HBase's Java client
# alone. A version at a time and a module per pytest, one session stack at a time.
SWEEP_2X        ?= 2.5.8,2.4.17,2.6.4,2.4.18,2.5.13-hadoop3
# HBase 3: the one release whose whole server tree the mirror holds (realstack/README.md);
# the lifecycle moves onto it from each of SWEEP_3X_FROM (2.6 -> 3.x, 3.x -> 3.x), then the
# conformance suite runs on it
SWEEP_3X        ?= 3.0.0-alpha-4
SWEEP_3X_FROM   ?= 2.6.1,3.0.0-alpha-4
# and once Kerberos-secured (HBASE_MIGRATE_LIFECYCLE_SECURITY, as `make sweep-secure`): from
# each of SWEEP_3X_SECURE_FROM at that security (empty: no secured leg)
SWEEP_3X_SECURITY    ?= privacy
SWEEP_3X_SECURE_FROM ?= 2.6.1
LIFECYCLE       = tests/rpc/test_lifecycle_native_real.py
SWEEP_MODULES   = $(LIFECYCLE) tests/rpc/test_conformance_real.py
define sweep
	@for v in $$(echo $(1) | tr , ' '); do for module in $(SWEEP_MODULES); do \
		echo "== HBase $$v: $$module"; \
		HBASE_MIGRATE_REAL_HBASE_VERSION=$$v $(PYTEST) -p no:cacheprovider \
			$$module $(PYTEST_ARGS) || exit 1; done; done
endef
sweep-2x: setup
	@scripts/system-deps.sh test
	$(call sweep,$(SWEEP_2X))

sweep-3x: setup
	@scripts/system-deps.sh test
	@for v in $$(echo $(SWEEP_3X) | tr , ' '); do for from in $$(echo $(SWEEP_3X_FROM) | tr , ' '); do \
		echo "== HBase $$from -> $$v: $(LIFECYCLE)"; \
		HBASE_MIGRATE_REAL_HBASE_SOURCE_VERSION=$$from HBASE_MIGRATE_REAL_HBASE_VERSION=$$v \
			$(PYTEST) -p no:cacheprovider -s $(LIFECYCLE) $(PYTEST_ARGS) || exit 1; done; \
		for from in $$(echo $(SWEEP_3X_SECURE_FROM) | tr , ' '); do \
		echo "== HBase $$from -> $$v, Kerberos ($(SWEEP_3X_SECURITY)): $(LIFECYCLE)"; \
		HBASE_MIGRATE_LIFECYCLE_SECURITY=$(SWEEP_3X_SECURITY) \
		HBASE_MIGRATE_REAL_HBASE_SOURCE_VERSION=$$from HBASE_MIGRATE_REAL_HBASE_VERSION=$$v \
			$(PYTEST) -p no:cacheprovider -s $(LIFECYCLE) $(PYTEST_ARGS) || exit 1; done; \
		echo "== HBase $$v: tests/rpc/test_conformance_real.py"; \
		HBASE_MIGRATE_REAL_HBASE_VERSION=$$v $(PYTEST) -p no:cacheprovider \
			tests/rpc/test_conformance_real.py $(PYTEST_ARGS) || exit 1; done

# `make test` runs each of these on the embedded cluster and on real HBase 2.6.1 against the
# same hand-written expectations; this runs the real side alone (the judge), e.g. after
# changing an expectation.
CONFORMANCE_CLIENTS = tests/rpc/test_filter_reads_real.py tests/rpc/test_admin_calls_real.py \
	tests/rpc/test_everyday_calls_real.py tests/rpc/test_driver_calls_real.py
conformance-clients: setup
	@scripts/system-deps.sh test
	$(PYTEST) -p no:cacheprovider -k "real]" $(CONFORMANCE_CLIENTS) $(PYTEST_ARGS)

# `make test` runs the no-gateway lifecycle between two plain stacks; this runs the same test
# between two Kerberos-secured ones (SWEEP_SECURE=...): `privacy` (hbase.rpc.protection
# privacy, one KDC, a client principal each) and `realms` (a KDC and realm each, no trust),
# one pair of secured stacks at a time.
SWEEP_SECURE ?= privacy,realms
sweep-secure: setup
	@scripts/system-deps.sh test
	@for security in $$(echo $(SWEEP_SECURE) | tr , ' '); do \
		echo "== $$security: $(LIFECYCLE)"; \
		HBASE_MIGRATE_LIFECYCLE_SECURITY=$$security $(PYTEST) -p no:cacheprovider \
			$(LIFECYCLE) $(PYTEST_ARGS) || exit 1; done

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(BIN)/python scripts/import_graph.py --check
	$(BIN)/python scripts/check_injection.py

.PHONY: golden-hfiles
golden-hfiles: setup
	$(BIN)/python -m tests.realstack.hfile_golden tests/data/real-hfile
	$(BIN)/python -m tests.realstack.hfile_golden tests/data/real-hfile-3.0 --hbase-version 3.0.0-alpha-4
	$(BIN)/python -m tests.realstack.hfile_golden tests/data/real-hfile-1.4 --hbase-version 1.4.13

.PHONY: golden-mob
golden-mob: setup
	$(BIN)/python -m tests.realstack.mob_golden tests/data/real-mob
	$(BIN)/python -m tests.realstack.mob_encoded_golden tests/data/real-mob-encoded

# The demo's folder is its target's own: state/demo, or state/demo-bigtable with
# ARGS="--target bigtable" (neither clears the other's report).
run: setup
	@case "$(ARGS)" in *celery*) scripts/system-deps.sh celery;; *) scripts/system-deps.sh airflow;; esac
	$(BIN)/hbase-migrate demo $(ARGS)

# First the 2-minute soak through the command line with its fixed seed (tests/soak: the
# suite runs a short one), then the long one through Airflow.
soak: setup
	HBASE_MIGRATE_LONG_SOAK=1 $(PYTEST) -q -p no:cacheprovider tests/soak/test_soak.py \
		-k two_minute
	$(BIN)/hbase-migrate soak --minutes 15 --dir state/soak $(ARGS)

# The crash harness: 50 kills spread over every step of the migration (tests/soak/test_crash.py
# runs a short one in make test-stacks).
soak-crash: setup
	$(BIN)/hbase-migrate soak-crash --kills 50 --seed 76 --cdc --airflow local,celery \
		--dir state/soak-crash $(ARGS)

# The crash harness's shorter run on a real HBase 2.6.1 pair (two realstack JVMs): two kills
# of every step (ARGS="--seed S --kills N").
soak-crash-real: setup
	$(BIN)/hbase-migrate soak-crash --stack real --kills 18 --seed 76 \
		--dir state/soak-crash-real $(ARGS)

# The timing-sensitive modules (WAL coverage, replay, live Airflow) ROUNDS times in a row with
# HOGS CPU-bound processes beside them the whole time (LOADED_ARGS=--disk adds a direct-I/O
# writer): what a busy CI runner or edge node does to them. Stops at the first failing round.
ROUNDS        ?= 10
HOGS          ?= 4
LOADED        ?= tests/replay tests/airflow/test_live_stack.py
LOADED_ARGS   ?=
.PHONY: test-loaded
test-loaded: setup
	@scripts/system-deps.sh test
	$(BIN)/python scripts/loaded.py --rounds $(ROUNDS) --hogs $(HOGS) $(LOADED_ARGS) -- \
		$(XDIST) -q $(LOADED) $(PYTEST_ARGS)

# The README's pictures: the main job's report, and the start DAG's graph in the Airflow UI
# (its live test saves it), in headless Chromium.
.PHONY: screenshots
screenshots: run
	$(BIN)/python -m tests.browser state/demo/report.html docs/report.png \
		--width 1100 --height 2600 --scale 0.5
	HBASE_MIGRATE_SCREENSHOTS=docs $(PYTEST) -q -p no:cacheprovider \
		tests/airflow/test_live_stack.py -k test_the_graph_view_shows_every_task

# The peers measured beside the project (the `bench` dependency group) join the venv here
# only, kept there (--inexact); `make setup` and the tests never need them.
bench: setup
	@$(UV) sync --quiet --frozen --all-extras --inexact --group bench --python $(PYTHON)
	$(BIN)/python bench/run_all.py

# The wheel as a user installs it (scripts/package-check.sh): built by pyproject's backend
# with the compiled hot loops, installed with [airflow,spark] into a fresh venv (the lock's
# versions; with AIRFLOW=X.Y.Z into a venv holding that Airflow first, which must stay), then
# outside the checkout `hbase-migrate --version` and scripts/check_installed.py (the
# provider's hooks, every DAG parsed, airflow providers list). package-matrix: the oldest and
# the newest Airflow the package claims (PACKAGE_AIRFLOWS).
PACKAGE_AIRFLOWS ?= 3.3.0,3.3.2
.PHONY: package-check package-matrix
package-check: $(UV)
	UV=$(UV) PYTHON=$(PYTHON) AIRFLOW=$(AIRFLOW) scripts/package-check.sh

package-matrix: $(UV)
	@for v in $$(echo $(PACKAGE_AIRFLOWS) | tr , ' '); do echo "== Airflow $$v"; \
		UV=$(UV) PYTHON=$(PYTHON) AIRFLOW=$$v OUT=build/package-check-$$v \
		scripts/package-check.sh || exit 1; done

# The docs site, its reference pages generated from the code at each build
# (scripts/gen_reference.py); it reads offline: open build/site/index.html.
.PHONY: docs
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) $(TOOLS) .pytest_cache .mypy_cache .ruff_cache .hypothesis

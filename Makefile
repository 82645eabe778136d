# The README's commands. Everything runs from the project's own .venv, made on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Every dependency, pinned with its hashes (make lock); installs take exactly these files. Nothing is
# compiled ahead: Python compiles each module the first time it is imported, so a cold start pays
# only for what it uses. deploy/venv.py keeps the first venv made from a lock in ~/.cache/joyback and
# gives the next fresh clone with the same lock a linked copy of it.
LOCK := requirements.lock
HOST ?= 127.0.0.1
PORT ?= 8000
# DATABASE_URL when set; otherwise the project's own PostgreSQL server, for the length of one command.
WITH_DB := $(BIN)/python -m joyback.embedded_db

# Nothing is compiled at install (below), so Python must be free to keep what it compiles: where the
# environment forbids writing bytecode, every process the product starts (each task worker, each
# test's subprocess, each bench run) would compile every module it imports again, at several times
# the CPU of a start from bytecode.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test lint format bench migrate demo clean lock audit cluster cluster-packages config-docs

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) deploy/venv.py $(VENV) $(LOCK)
	$(BIN)/pip install --quiet --no-compile --no-deps -e .
	touch $(STAMP)

# After changing the dependencies in pyproject.toml: pins every package (the dev extra included)
# with the hashes of all its published files, then `make` installs from the new lock.
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet "pip-tools>=7.4,<8"
	$(BIN)/pip-compile --quiet --generate-hashes --extra dev --strip-extras --allow-unsafe \
		--no-emit-index-url --no-emit-find-links --no-emit-trusted-host -o $(LOCK) pyproject.toml

# Known vulnerabilities in the locked versions (pip-audit; fails when one is found). It needs the
# vulnerability database (PyPI's JSON API or OSV), so it is not part of `make test`.
audit:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet "pip-audit>=2.7,<3"
	$(BIN)/pip-audit --strict --require-hashes --disable-pip -r $(LOCK)

# On a new .pgdata/, a copy of the migrated server is kept in ~/.cache/joyback (joyback/embedded_db.py):
# the next fresh clone with the same migrations starts from it and has nothing left to migrate.
migrate: $(STAMP)
	JOYBACK_ENV=development $(WITH_DB) $(BIN)/python manage.py migrate --no-input
	$(BIN)/python -m joyback.embedded_db --keep-migrated

# The whole demo in one process (payouts/management/commands/demo.py); its mails go to tmp/mails/.
# Links in the demo's mails and provider redirects point where make run serves.
DEMO_SITE_URL = $(or $(SITE_URL),http://$(HOST):$(PORT))

demo: migrate
	@mkdir -p tmp/mails
	JOYBACK_ENV=development EMAIL_BACKEND=django.core.mail.backends.filebased.EmailBackend \
		EMAIL_FILE_PATH=tmp/mails SITE_URL=$(DEMO_SITE_URL) LOG_LEVEL=WARNING $(WITH_DB) \
		$(BIN)/python manage.py demo

# Mails go to files in tmp/mails/ and the workers log warnings only, so the sign-ins printed last
# stay on screen. Ctrl-C (or a TERM to make or to its whole group) stops every process deploy/run.sh
# started, each after what it is doing, and then the embedded PostgreSQL.
run: demo
	@mkdir -p tmp/mails
	@JOYBACK_ENV=development EMAIL_BACKEND=django.core.mail.backends.filebased.EmailBackend \
	EMAIL_FILE_PATH=tmp/mails SITE_URL=$(DEMO_SITE_URL) \
	BIN=$(BIN) HOST=$(HOST) PORT=$(PORT) $(WITH_DB) deploy/run.sh

# The production topology on this machine (deploy/cluster.py): a PostgreSQL primary and a streaming
# replica of its own (the machine's PostgreSQL 15, data under tmp/cluster/), Redis, two gunicorn web
# nodes and the two worker groups, each its own process group. CLUSTER_ARGS="--pooling pgbouncer"
# puts PgBouncer in front of the primary, "--pooling django" gives each process a psycopg pool.
# Ctrl-C stops everything; `make cluster CLUSTER_ARGS=down` stops what a crash left running.
cluster: $(STAMP) cluster-packages
	$(BIN)/python -m deploy.cluster $(CLUSTER_ARGS)

# What the cluster runs beside PostgreSQL 15 and Redis, installed when missing as wrk is for the bench:
# PgBouncer, and Patroni with etcd (Debian's packages), the failover deploy/cluster.py sets up.
CLUSTER_PACKAGES := pgbouncer:pgbouncer patroni:patroni etcd:etcd-server
cluster-packages:
	@missing=""; for pair in $(CLUSTER_PACKAGES); do command -v $${pair%%:*} >/dev/null 2>&1 \
		|| [ -x /usr/sbin/$${pair%%:*} ] || missing="$$missing $${pair#*:}"; done; \
	[ -z "$$missing" ] || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $$missing >/dev/null) \
		|| echo "could not install$$missing: the cluster runs without them (no failover, no PgBouncer)"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m config.docs --check
	JOYBACK_ENV=test $(WITH_DB) $(BIN)/python manage.py makemigrations --check --dry-run

# After changing config/variables.py: the README's configuration tables and the entrypoint's list of
# required variables, written from the declarations.
config-docs: $(STAMP)
	$(BIN)/python -m config.docs

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

test: lint
	JOYBACK_ENV=test $(WITH_DB) $(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP) cluster-packages
	@command -v wrk >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null) \
		|| echo "wrk could not be installed: the HTTP benchmarks will say so"
	JOYBACK_ENV=test $(BIN)/python -m tests.bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pgdata staticfiles .pytest_cache .ruff_cache

# The README's commands. Everything runs from the project's own .venv, made on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# DATABASE_URL when set; otherwise the project's own PostgreSQL server, for the length of one command.
WITH_DB := $(BIN)/python -m joyback.embedded_db

.PHONY: run test lint format bench migrate demo clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

migrate: $(STAMP)
	JOYBACK_ENV=development $(WITH_DB) $(BIN)/python manage.py migrate --no-input

demo: migrate
	JOYBACK_ENV=development $(WITH_DB) $(BIN)/python manage.py demo_seed
	JOYBACK_ENV=development $(WITH_DB) $(BIN)/python manage.py demo_payouts
	JOYBACK_ENV=development $(WITH_DB) $(BIN)/python manage.py demo_shops

run: demo
	@echo ""
	@echo "JoyBack is starting on http://$(HOST):$(PORT)/"
	@echo "  brand dashboard: http://$(HOST):$(PORT)/brands/   admin: http://$(HOST):$(PORT)/admin/"
	@echo ""
	JOYBACK_ENV=development $(WITH_DB) bash -c 'trap "kill 0" EXIT; \
		$(BIN)/python manage.py qcluster & \
		$(BIN)/python manage.py work & \
		$(BIN)/python manage.py runserver $(HOST):$(PORT)'

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	JOYBACK_ENV=test $(WITH_DB) $(BIN)/python manage.py makemigrations --check --dry-run

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

test: lint
	JOYBACK_ENV=test $(WITH_DB) $(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	@command -v wrk >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null) \
		|| echo "wrk could not be installed: the HTTP benchmarks will say so"
	JOYBACK_ENV=test $(BIN)/python -m tests.bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pgdata staticfiles .pytest_cache .ruff_cache

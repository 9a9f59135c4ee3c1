# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two stamps: .installed-run, what `make run` needs (the runtime);
# .installed, everything (the dev and test extras too), which
# `make test` and CI ask for. Each is made when missing, so `make test`
# after `make run` still adds the dev extras.
RUN_INSTALLED := $(VENV)/.installed-run
INSTALLED := $(VENV)/.installed

.PHONY: run test lint format audit

run: $(RUN_INSTALLED) .env
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py ensureadmin
	@echo "Serving on http://127.0.0.1:8000/ (admin at /admin/); Ctrl-C stops."
	@# Ctrl-C is a clean stop, not a make error (130 = interrupted).
	@PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m monitor.run_procfile Procfile.dev \
		|| [ $$? -eq 130 ]

# The suite on TEST_WORKERS processes, each on a database of its own: most
# tests wait on servers and processes, so more workers than cores pays.
TEST_WORKERS ?= 4

test: $(INSTALLED)
	$(BIN)/pytest -n $(TEST_WORKERS) --dist worksteal

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# Known advisories for the pinned versions (needs the PyPI JSON API).
audit: $(INSTALLED)
	$(BIN)/pip-audit --requirement constraints.txt --disable-pip --no-deps

format: $(INSTALLED)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Pinned versions from constraints.txt: every machine runs what CI audited.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(RUN_INSTALLED): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install --quiet --constraint constraints.txt --editable '.[run]'
	touch $@

$(INSTALLED): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install --quiet --constraint constraints.txt --editable '.[dev]'
	touch $@

# A local, plain-http configuration with a fresh secret key; never overwritten.
.env:
	$(PYTHON) -c "import secrets; print('SECRET_KEY=' + secrets.token_urlsafe(50)); print('HTTPS=false')" > $@

# Set-up and entry points. `make run` and `make test` each install what they need first.
VENV     := .venv
PY       := $(VENV)/bin/python
PIP      := $(VENV)/bin/pip
CHROMIUM := /usr/bin/chromium
EXAMPLE  := build/example.onnx

BUNDLE   := app/static/dist

.PHONY: run test test-team lint lint-py lint-js audit setup python-deps node-deps bundle chromium postgres locale clean

run: setup $(EXAMPLE)
	$(VENV)/bin/onnx-studio $(EXAMPLE)

# The tests' temporary folders (each test's store) in RAM where the machine has a tmpfs: the
# store fsyncs every blob and index commit, a tenth of the main pass on disk (1,029 s -> 918 s).
# Not where it is mounted noexec: the wheel test runs a console script from a venv made there.
# PYTHONDONTWRITEBYTECODE (set in CI's environment) made each test process, and every helper,
# server and CLI it starts, compile the app and pytest rewrite the tests anew: cleared for the tests.
TESTENV = PYTHONDONTWRITEBYTECODE= TMPDIR=$(TEST_TMP)
TEST_TMP := $(shell test -d /dev/shm -a -w /dev/shm && ! grep -qs ' /dev/shm [^ ]* [^ ]*noexec' /proc/mounts && echo /dev/shm || echo /tmp)

test: setup chromium postgres locale lint audit
	$(TESTENV) $(VENV)/bin/pytest -n 2 --dist loadgroup -q --durations=15
	$(MAKE) --no-print-directory test-team

# The API suite again with every app's store on PostgreSQL + S3, as a team's server keeps it;
# what doesn't depend on the store's back end runs once (tests/conftest.py: RUN_ONCE).
test-team: setup postgres
	$(TESTENV) STUDIO_TEST_BACKEND=postgresql+s3 $(VENV)/bin/pytest -n 2 --dist loadgroup -q --durations=15

# Known vulnerabilities in the installed Python packages, deprecations of the npm ones: what the
# registries we can reach tell (scripts/audit_deps.py says what it can't cover and why).
audit: python-deps node-deps
	$(PY) scripts/audit_deps.py

# The quality gate: lint, format and types of the Python and of the page scripts.
lint: lint-py lint-js

lint-py: python-deps
	$(VENV)/bin/ruff check app tests bench scripts
	$(VENV)/bin/ruff format --check app tests bench scripts
	$(VENV)/bin/mypy

# eslint (eslint.config.mjs) and tsc --checkJs on the JSDoc types (tsconfig.json; the layout
# worker, a classic worker script with worker globals, in tsconfig.worker.json)
lint-js: node-deps
	node_modules/.bin/eslint --max-warnings 0 --cache --cache-strategy content --cache-location node_modules/.cache/eslint/ app/static/js
	node_modules/.bin/tsc -p tsconfig.json
	node_modules/.bin/tsc -p tsconfig.worker.json

setup: python-deps node-deps bundle

python-deps: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip setuptools  # the venv's own setuptools 65 has known CVEs
	$(PIP) install --quiet -e '.[test,team]'
	touch $@

node-deps: node_modules/.installed
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# The front end built into the package by scripts/build_frontend.py (setup.py runs it too, for
# sdists and wheels): the pages' modules bundled by esbuild into static/dist (a few requests
# instead of ~45; the server sends the modules themselves while the sources differ from the ones
# the bundle's manifest names) and the npm libraries the page loads, copied into static/vendor.
bundle: $(BUNDLE)/manifest.json
$(BUNDLE)/manifest.json: node_modules/.installed scripts/build_frontend.py $(shell find app/static/js -name '*.js')
	python3 scripts/build_frontend.py

$(EXAMPLE): python-deps scripts/make_example_model.py
	$(PY) scripts/make_example_model.py $@

# Browser tests need Debian's chromium; install it when we can (root), else say how.
# The PostgreSQL back end's tests start a real server (tests/pg_server.py): Debian's postgresql
postgres:
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql; \
	  else \
	    echo "The PostgreSQL tests need Debian's postgresql (initdb, pg_ctl)."; \
	    echo "Install it with: sudo apt-get install -y postgresql   (then run make test again)"; \
	    exit 1; \
	  fi; \
	fi

# onnxruntime's StringNormalizer (the first node of a scikit-learn text pipeline) builds the
# en_US.UTF-8 locale unless the model names another; Debian's locales package defines it
locale:
	@if ! locale -a 2>/dev/null | grep -qix 'en_US.utf-\?8'; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    ([ -f /usr/share/i18n/locales/en_US ] || (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y locales)) \
	      && localedef -i en_US -f UTF-8 en_US.UTF-8; \
	  else \
	    echo "The text-model tests need the en_US.UTF-8 locale."; \
	    echo "Make it with: sudo localedef -i en_US -f UTF-8 en_US.UTF-8   (then run make test again)"; \
	    exit 1; \
	  fi; \
	fi

chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	  else \
	    echo "Browser tests need Debian's chromium at $(CHROMIUM)."; \
	    echo "Install it with: sudo apt-get install -y chromium   (then run make test again)"; \
	    exit 1; \
	  fi; \
	fi

clean:
	rm -rf $(VENV) node_modules build dist test-artifacts $(BUNDLE) app/static/vendor

# Set-up and entry points. `make run` and `make test` each install what they need first.
VENV     := .venv
PY       := $(VENV)/bin/python
PIP      := $(VENV)/bin/pip
CHROMIUM := /usr/bin/chromium
EXAMPLE  := build/example.onnx

.PHONY: run test setup python-deps node-deps chromium clean

run: setup $(EXAMPLE)
	$(VENV)/bin/onnx-studio $(EXAMPLE)

test: setup chromium
	$(VENV)/bin/pytest -n 2 --dist loadgroup -q

setup: python-deps node-deps

python-deps: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[test]'
	touch $@

node-deps: node_modules/.installed
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

$(EXAMPLE): python-deps scripts/make_example_model.py
	$(PY) scripts/make_example_model.py $@

# Browser tests need Debian's chromium; install it when we can (root), else say how.
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
	rm -rf $(VENV) node_modules build test-artifacts

# Proctor — the two commands that matter: `make run` and `make test`.
# Both install what a fresh Debian 12 machine lacks, so they work on a clean checkout.

SWIFT       ?= swift
PREFIX      ?= /usr/local
DESTDIR     ?=
APT_PACKAGES = libsystemd-dev libsqlite3-dev python3-venv
VENV        := .venv
RUN_DIR     := $(CURDIR)/run

.PHONY: all deps venv build release test run bench install clean

all: build

# Debian packages the build and tests need, installed only when missing.
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# The Python client tests use the independent `varlink` package from PyPI, in a venv
# built on Debian's python3 (so the tests may also run it as an unprivileged user).
$(VENV)/.installed: Tests/python/requirements.txt
	/usr/bin/python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q -r Tests/python/requirements.txt
	touch $@

venv: deps $(VENV)/.installed

test: deps venv
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	PROCTOR_BIN=$$($(SWIFT) build --show-bin-path) $(VENV)/bin/pytest -q Tests/python

run: release
	@echo "proctord is not written yet; validating config/ instead"

clean:
	rm -rf .build $(VENV) $(RUN_DIR)

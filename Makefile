# Proctor — the two commands that matter: `make run` and `make test`.
# Both install what a fresh Debian 12 machine lacks, so they work on a clean checkout.

SWIFT       ?= swift
PREFIX      ?= /usr/local
DESTDIR     ?=
# Build: the five C libraries, and libstdc++'s archive for release builds (libstdc++-12-dev).
# Tests: openssl (certificates for the HTTPS fetch tests), the
# venv, the sqlite3 CLI (store fault tests), and systemd, util-linux (unshare, nsenter,
# setpriv, mount), iproute2 (ss) and procps for the real-systemd box — present on this image,
# checked so a leaner one still works. Manual pages: scdoc builds them, man-db renders them
# in the tests. Completion tests: bash-completion, zsh and fish. Offline-launch tests: keyutils
# (keyctl reads the test user's keyring). Fleet tests in the box
# (Tests/systemd/test-fleet.sh): Debian's prometheus-node-exporter serves proctor-metrics'
# file, systemd-journal-remote receives the journal systemd-journal-upload sends, curl scrapes.
APT_PACKAGES = libsystemd-dev libsqlite3-dev libsodium-dev libkeyutils-dev libcurl4-openssl-dev openssl \
               python3-venv sqlite3 systemd util-linux iproute2 procps scdoc man-db bash-completion zsh fish \
               prometheus-node-exporter systemd-journal-remote curl libstdc++-12-dev keyutils strace
VENV        := .venv
RUN_DIR     := $(CURDIR)/run
MAN_DIR     := .build/man
# `make man` builds the pages with the debug proctorctl; `make install` with the release one.
MAN_BUILD_FLAGS ?=
# Release executables carry the Swift runtime they use (-static-stdlib): an installed
# proctord needs no Swift toolchain under /opt/swift, and maps ≈ 3 MiB less (BENCHMARKS.md,
# "Start-up, reload and memory"). They carry the runtime's C++ library too: libstdc++ as a
# shared library makes every start map and relocate its symbol tables, ≈ 1.2 MiB of proctord's
# idle RSS. The runtime's link line asks for `-lstdc++`; a folder that holds only the archive,
# searched before gcc's, makes that the archive. Each function gets its own section, and gold
# (Swift's linker here) places proctord's hot ones first, together, in the order of
# bench/link-order.txt (`make link-order` regenerates it): the code of a `Decide` then spans
# a few pages instead of dozens, which a call on a CPU shared with its client finds cold
# (BENCHMARKS.md, "Decide over Varlink"). The compiler optimises with bench/proctord.profdata,
# the execution counts of an instrumented proctord under the bench's daemon workloads
# (`make profile` regenerates it): profile-guided, LLVM lays each hot function's common path
# out straight and leaves the rest of the code alone. A toolchain that cannot read the file
# builds without it. Every release build uses the same flags, or SwiftPM rebuilds everything.
STATIC_CXX_DIR := $(CURDIR)/.build/static-libstdc++
LINK_ORDER    := $(CURDIR)/bench/link-order.txt
PROFILE       := $(CURDIR)/bench/proctord.profdata
# The toolchain's own tools (clang, llvm-profdata), beside the real `swift`, not a symlink's.
TOOLCHAIN_BIN := $(dir $(realpath $(shell command -v $(SWIFT))))
PROFDATA      := $(TOOLCHAIN_BIN)llvm-profdata
PROFILE_FLAGS := $(shell $(PROFDATA) show $(PROFILE) >/dev/null 2>&1 && \
                   echo -Xswiftc -Xfrontend -Xswiftc -ir-profile-use=$(PROFILE))
STATIC_FLAGS  := -c release --static-swift-stdlib -Xlinker -L$(STATIC_CXX_DIR)
RELEASE_FLAGS := $(STATIC_FLAGS) \
                 -Xswiftc -Xfrontend -Xswiftc -function-sections -Xlinker --section-ordering-file=$(LINK_ORDER) \
                 $(PROFILE_FLAGS)

.PHONY: all deps venv build release man test test-systemd run bench link-order profile install clean

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

# SwiftPM does not recompile an unchanged source when only `-Xswiftc` flags or the profile
# change, so a build made with other flags or another profile (or before .build/release-flags
# recorded them) is removed first.
RELEASE_STAMP := .build/release-flags
RELEASE_ID     = $(RELEASE_FLAGS) $(if $(PROFILE_FLAGS),$(shell sha256sum < $(PROFILE) | cut -c1-16))
release: deps $(STATIC_CXX_DIR)/libstdc++.a
	@$(if $(PROFILE_FLAGS),,echo "release: $(PROFILE) is missing or $(PROFDATA) cannot read it: building without the profile")
	@bin=$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path); \
	if [ -d "$$bin" ] && [ "$$(cat $(RELEASE_STAMP) 2>/dev/null)" != "$(RELEASE_ID)" ]; then \
	  echo "release flags or profile changed since the last release build: building everything again"; \
	  rm -rf "$$bin"; \
	fi
	$(SWIFT) build $(RELEASE_FLAGS)
	@echo "$(RELEASE_ID)" > $(RELEASE_STAMP)

$(STATIC_CXX_DIR)/libstdc++.a:
	@archive=$$($(TOOLCHAIN_BIN)clang -print-file-name=libstdc++.a); \
	if [ ! -f "$$archive" ]; then echo "libstdc++.a not found (Debian's libstdc++-12-dev)" >&2; exit 1; fi; \
	mkdir -p $(STATIC_CXX_DIR) && ln -sf "$$archive" $@

# The Python client tests use the independent `varlink` package from PyPI, in a venv
# built on Debian's python3 (so the tests may also run it as an unprivileged user).
$(VENV)/.installed: Tests/python/requirements.txt
	/usr/bin/python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q -r Tests/python/requirements.txt
	touch $@

venv: deps $(VENV)/.installed

# The layer check (each target imports exactly what Package.swift declares), unit tests,
# then the real binaries through the Python varlink client, then real systemd
# and journald in a PID namespace (Tests/systemd, see ../shared/TESTING.md).
test: deps venv
	$(SWIFT) build --build-tests
	scripts/check-imports.py
	$(SWIFT) test --skip-build
	$(SWIFT) build --package-path Examples/NotesApp --build-tests && $(SWIFT) test --package-path Examples/NotesApp --skip-build
	PROCTOR_BIN=$$($(SWIFT) build --show-bin-path) $(VENV)/bin/pytest -q Tests/python
	$(MAKE) --no-print-directory test-systemd
	$(MAKE) --no-print-directory fuzz-build

# The fleet test parses node_exporter's answer with the venv's prometheus_client.
test-systemd: deps venv
	for product in proctord proctorctl systemdkit-probe; do $(SWIFT) build --product $$product || exit 1; done
	Tests/systemd/run.sh "$$($(SWIFT) build --show-bin-path)"

# libFuzzer targets (Fuzz/README.md), built with the Swift toolchain's libFuzzer, ASan and
# lld. fuzz-build builds every target and runs each once over its seeds in Fuzz/corpus, so
# `make test` keeps them compiling; `make fuzz` then fuzzes each target for FUZZ_SECONDS,
# one after another. FUZZ_TARGETS="json varlink" picks some.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=

.PHONY: fuzz fuzz-build
fuzz-build:
	Fuzz/build.sh $(FUZZ_TARGETS)
	Fuzz/run.sh 0 $(FUZZ_TARGETS)

fuzz: fuzz-build
	Fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# proctord in the foreground on the policy in config/, with its sockets and state under
# run/ in the checkout (no root paths touched). Ctrl-C stops it.
run: release
	@mkdir -p $(RUN_DIR)
	@bin=$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path); \
	echo "proctord on config/policy.d; in another terminal try:"; \
	echo "  export PROCTOR_ADMIN_SOCKET=$(RUN_DIR)/io.proctor.Admin"; \
	echo "  $$bin/proctorctl status"; \
	echo "  $$bin/proctorctl policy apply config/examples && $$bin/proctorctl check io.proctor.demo.notes print"; \
	exec $$bin/proctord --config-dir $(CURDIR)/config --state-dir $(RUN_DIR)/state \
	    --runtime-dir $(RUN_DIR) --log-target stderr

# Proctor beside Cedar, Rego and the socket floor, in one run (BENCHMARKS.md).
# QUICK=1 for a run under a minute.
bench: release
	QUICK=$(QUICK) bench/run.sh

# bench/link-order.txt from a callgrind profile of the release proctord answering the
# bench's Decide round trips; then proctord is linked again in that order.
link-order: release
	@dpkg -s valgrind >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind; }
	@bin=$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path); \
	scripts/link-order.sh "$$bin" $(LINK_ORDER) && rm -f "$$bin/proctord" && $(SWIFT) build $(RELEASE_FLAGS)

# bench/proctord.profdata: proctord built apart with instrumentation (in .build/profile),
# driven by the release proctor-bench's quick daemon workloads (scripts/profile.sh). Then
# `make release` rebuilds with it; run `make link-order` after, as the layout changes.
PROFILE_SCRATCH := $(CURDIR)/.build/profile
profile: release
	rm -rf $(PROFILE_SCRATCH)/raw
	$(SWIFT) build $(STATIC_FLAGS) --scratch-path $(PROFILE_SCRATCH) \
	    -Xswiftc -Xfrontend -Xswiftc -ir-profile-generate=$(PROFILE_SCRATCH)/raw/proctord-%p.profraw \
	    -Xlinker $$($(TOOLCHAIN_BIN)clang -print-resource-dir)/lib/linux/libclang_rt.profile-x86_64.a \
	    -Xlinker -u -Xlinker __llvm_profile_runtime --product proctord
	scripts/profile.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)" $(PROFILE_SCRATCH)/release/proctord \
	    $(PROFILE_SCRATCH)/raw $(PROFDATA) $(PROFILE)
	$(MAKE) --no-print-directory release

# The manual pages (man/*.scd, scdoc) into .build/man. proctorctl(1)'s command reference
# comes from proctorctl's own command table, so the built proctorctl is needed first.
man: deps
	$(SWIFT) build $(MAN_BUILD_FLAGS) --product proctorctl
	scripts/build-man.sh "$$($(SWIFT) build $(MAN_BUILD_FLAGS) --show-bin-path)" $(MAN_DIR)

install: release
	$(MAKE) --no-print-directory man MAN_BUILD_FLAGS="$(RELEASE_FLAGS)"
	DESTDIR=$(DESTDIR) PREFIX=$(PREFIX) BUILD_DIR=$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path) \
	    MAN_DIR=$(MAN_DIR) scripts/install.sh

clean:
	rm -rf .build Examples/*/.build $(VENV) $(RUN_DIR)

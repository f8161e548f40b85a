# agentwire — a thin front over CMake. Every target first installs what is
# missing from Debian's packages (when run as root), so a fresh machine
# needs nothing by hand.

CC ?= cc
JOBS := $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local
FUZZ_SECONDS ?= 30
# which fuzz targets `make fuzz` runs (default: all of fuzz/fuzz_*.c)
FUZZ_TARGETS ?= $(basename $(notdir $(wildcard fuzz/fuzz_*.c)))
BUILD_TEST := build/asan
BUILD_REL := build/release
BUILD_FUZZ ?= build/fuzz
BUILD_BENCH := build/bench

DEB_PACKAGES := build-essential cmake clang pkg-config libcmocka-dev libexpat1-dev libpcre2-dev libclang-rt-14-dev \
	libcurl4-openssl-dev libsqlite3-dev libpq-dev postgresql libyaml-dev libmicrohttpd-dev libhiredis-dev redis-server
DEMO_CMDS = \
	$(BUILD_REL)/agentwire thread encode --strip-ansi --prefill "Based on the thread above, my next step is" examples/session.jsonl && \
	$(BUILD_REL)/agentwire json format --indent 2 examples/event.json
# A real agent, offline: a recorded model (replay) calling real command
# tools (examples/agent/tools/) over the examples, in the xml transport; the
# recording checks that the tools' outputs reached the model. The report
# goes to stdout; the thread, envelopes, accounting and the stored session
# to DEMO_OUT.
AGENTWIRE ?= $(BUILD_REL)/agentwire
DEMO_OUT ?= build/demo
DEMO_AGENT = $(AGENTWIRE) run --model replay:examples/agent/session.jsonl --transport xml --nonce dec0de42 \
	--tools examples/agent/tools.json --thread $(DEMO_OUT)/thread.xml --events $(DEMO_OUT)/events.jsonl \
	--accounting $(DEMO_OUT)/accounting.jsonl --store sqlite:$(DEMO_OUT)/sessions.db \
	"Which tools does examples/session.jsonl call, and how many events does it hold?"

.PHONY: all deps test-deps build demo demo-agent test e2e bench fuzz install clean

all: build

# Install missing Debian packages (quietly, and only when something is missing).
deps:
	@missing=""; \
	for p in $(DEB_PACKAGES) $(TEST_DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else \
	    echo "missing Debian packages:$$missing (run as root, or: sudo apt-get install$$missing)"; exit 1; \
	  fi; \
	fi

build: deps
	cmake -S . -B $(BUILD_REL) -DCMAKE_BUILD_TYPE=Release -DAW_TESTS=OFF >/dev/null
	cmake --build $(BUILD_REL) -j $(JOBS)

demo: build
	@$(DEMO_CMDS)
	@echo
	@$(MAKE) --no-print-directory demo-agent

# The agent of the demo alone, with the agentwire already built
# (tests/test_cli_demo.sh runs this very target).
demo-agent:
	@mkdir -p $(DEMO_OUT)
	$(DEMO_AGENT)
	@echo "the run's thread, envelopes, accounting and session: $(DEMO_OUT)/thread.xml, events.jsonl, accounting.jsonl, sessions.db"

# The tests run real MCP servers (npm, pinned in tests/mcp/package-lock.json).
test-deps:
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then echo "installing: nodejs npm"; apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null; \
	  else echo "node and npm are needed for the MCP tests (sudo apt-get install nodejs npm)"; exit 1; fi; }
	@[ -d tests/mcp/node_modules ] || (cd tests/mcp && npm ci --silent --no-audit --no-fund)

# the serve pages are tested in a real browser (tests/test_serve_browser.c)
test: TEST_DEB_PACKAGES := chromium
test: deps test-deps
	CC=$(CC) cmake -S . -B $(BUILD_TEST) -DCMAKE_BUILD_TYPE=Debug -DAW_SANITIZE=ON -DAW_WERROR=ON >/dev/null
	cmake --build $(BUILD_TEST) -j $(JOBS)
	ctest --test-dir $(BUILD_TEST) --output-on-failure -j $(JOBS)

# The command-line providers with the real claude and codex CLIs against the
# suite's model-API stub (tests/e2e/README.md): about 640 MB from npm, pinned
# in tests/e2e/package-lock.json, so not part of `make test`.
e2e: deps test-deps
	@[ -x tests/e2e/node_modules/.bin/claude ] && [ -x tests/e2e/node_modules/.bin/codex ] || \
	  (cd tests/e2e && npm ci --silent --no-audit --no-fund)
	CC=$(CC) cmake -S . -B $(BUILD_TEST) -DCMAKE_BUILD_TYPE=Debug -DAW_SANITIZE=ON -DAW_WERROR=ON >/dev/null
	cmake --build $(BUILD_TEST) -j $(JOBS) --target agentwire stub_llm
	bash tests/e2e/run.sh $(BUILD_TEST)

bench: deps
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; \
	  else echo "node and npm are needed for the benchmark peers"; exit 1; fi; }
	@[ -d bench/peers/node_modules ] || (cd bench/peers && npm ci --silent)
	@python3 -c 'import pydantic' 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-pydantic >/dev/null; \
	  else echo "the dialects peer wants python3 and pydantic (Debian: python3-pydantic); it uses dataclasses without"; fi; }
	cmake -S . -B $(BUILD_BENCH) -DCMAKE_BUILD_TYPE=Release -DAW_BENCH=ON -DAW_TESTS=OFF >/dev/null
	cmake --build $(BUILD_BENCH) -j $(JOBS)
	bash bench/run.sh $(BUILD_BENCH) $(BENCH)

fuzz: deps
	CC=clang cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAW_FUZZ=ON -DAW_TESTS=OFF -DAW_WERROR=ON >/dev/null
	cmake --build $(BUILD_FUZZ) -j $(JOBS)
	@set -e; for name in $(FUZZ_TARGETS); do \
	  corpus=$(BUILD_FUZZ)/corpus/$$name; mkdir -p $$corpus; \
	  [ -d fuzz/corpus/$$name ] && cp -n fuzz/corpus/$$name/* $$corpus/ 2>/dev/null || true; \
	  echo "fuzzing $$name for $(FUZZ_SECONDS)s"; \
	  $(BUILD_FUZZ)/$$name -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 \
	    -artifact_prefix=$(BUILD_FUZZ)/$$name- -print_final_stats=1 $$corpus 2>$(BUILD_FUZZ)/$$name.log \
	    || { tail -n 40 $(BUILD_FUZZ)/$$name.log; exit 1; }; \
	  grep -E '^(stat::number_of_executed_units|Done)' $(BUILD_FUZZ)/$$name.log || true; \
	done

# Installed as root into /usr or /usr/local (whose lib directories the
# dynamic linker searches), the linker's cache is refreshed, so programs find
# libagentwire.so.0 at once; anywhere else the directory must be made known.
install: build
	cmake --install $(BUILD_REL) --prefix $(PREFIX)
	@libdir=$$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' $(BUILD_REL)/CMakeCache.txt); \
	case "$(PREFIX)" in \
	  /usr|/usr/|/usr/local|/usr/local/) \
	    if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; \
	    else echo "run ldconfig as root so programs find libagentwire.so.0"; fi ;; \
	  *) echo "programs find libagentwire.so.0 in $(PREFIX)/$$libdir once it is in /etc/ld.so.conf.d/ (then run ldconfig) or in LD_LIBRARY_PATH" ;; \
	esac

clean:
	rm -rf build

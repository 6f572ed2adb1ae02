# attnc: `make demo` and `make test` set up everything on a fresh Debian 12 machine.
ROOT := $(abspath .)
VENV := $(ROOT)/.venv
BUILD ?= $(ROOT)/build
JOBS ?= $(shell nproc)
HALIDE_DIR = $(shell $(VENV)/bin/python -c "import halide, os; print(os.path.join(os.path.dirname(halide.__file__), 'lib64', 'cmake', 'Halide'))")
CMAKE := $(VENV)/bin/cmake
CTEST := $(VENV)/bin/ctest

.PHONY: setup configure build test demo install wheel bench check-sanitize fuzz sweep arm clean

setup:
	@bash scripts/setup.sh

configure: setup
	@PATH="$(VENV)/bin:$$PATH" $(CMAKE) -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DHalide_DIR=$(HALIDE_DIR) -DCMAKE_MAKE_PROGRAM=$(VENV)/bin/ninja -DATTNC_ARM_BUILD=$(ARM_BUILD) \
	  -DATTNC_FULL_TESTS=$(if $(FULL),ON,OFF) >/dev/null

build: configure
	@PATH="$(VENV)/bin:$$PATH" $(CMAKE) --build $(BUILD) -j $(JOBS)

# LABEL=examples builds only what that label's tests need (the target tests_examples), then runs
# that label's tests alone; without LABEL, everything, then every test. CTEST_ARGS go to ctest.
# FULL=1 also registers the tests too long for the default run (ATTNC_FULL_TESTS: the TSan tree,
# the add_subdirectory consumer that builds its own generator, every AArch64 kernel suite).
test: configure
	@if [ -n "$(LABEL)" ] && ! $(VENV)/bin/ninja -C $(BUILD) -t query tests_$(LABEL) >/dev/null 2>&1; then \
	  echo "make test: no test has the label '$(LABEL)'; the labels are:" \
	    $$($(VENV)/bin/ninja -C $(BUILD) -t targets all | sed -n 's/^tests_\([A-Za-z0-9_-]*\): phony$$/\1/p' | sort); \
	  exit 2; fi
	@PATH="$(VENV)/bin:$$PATH" $(CMAKE) --build $(BUILD) -j $(JOBS) $(if $(LABEL),--target tests_$(LABEL))
	@cd $(BUILD) && PATH="$(VENV)/bin:$$PATH" $(CTEST) --output-on-failure -j $(JOBS) \
	  $(if $(LABEL),-L '^$(LABEL)$$') $(CTEST_ARGS)

# Builds only what the demo runs; V=1 (or ATTNC_VERBOSE=1) shows the build's own lines.
V ?= 0
demo: configure
	@V=$(V) JOBS=$(JOBS) bash scripts/demo.sh $(BUILD)

# Installs attnc (tool, runtime, headers, CMake package, libHalide) into PREFIX, self-contained:
# find_package(attnc) against PREFIX works with the source tree deleted. Builds only what installs.
PREFIX ?= $(HOME)/.local/attnc
install: configure
	@PATH="$(VENV)/bin:$$PATH" $(CMAKE) --build $(BUILD) -j $(JOBS) --target attnc_package
	@$(CMAKE) --install $(BUILD) --prefix $(PREFIX)

# The Python wheel: the attnc generator, libattnc_runtime.so and the binding, depending on the halide
# wheel for libHalide: build/wheel/attnc-<version>-py3-none-linux_x86_64.whl. Builds only what it holds.
wheel: configure
	@PATH="$(VENV)/bin:$$PATH" $(CMAKE) --build $(BUILD) -j $(JOBS) --target attnc_wheel
	@echo "pip install $$(ls $(BUILD)/wheel/attnc-*.whl)"

# attnc against its peers (bench/run_bench.py, then scaling.py, paired.py, lowp_paired.py and
# llm_bench.py). BENCH_ONLY=lowp times only issue 20's bf16 / f16 rows (and lowp_paired.py),
# BENCH_ONLY=f32 only the fp32 ones (and scaling.py, paired.py), BENCH_ONLY=llm only issue 24's
# KV-cache / RoPE rows (llm_bench.py); BENCH_WORKLOADS=W1,W4 only those workloads (no sweep,
# none of the four after run_bench.py); BENCH_ONLY=amx only issue 36's paired W1 rows (fp32, bf16
# on the best variant, bf16 capped at avx512) with the FMA and AMX tile peaks (amx_paired.py);
# BENCH_ONLY=backward only issue 33's backward rows against PyTorch's (backward_paired.py);
# BENCH_ONLY=dropout only what dropout=0.1 costs the forward and backward (dropout_paired.py);
# BENCH_ONLY=blockmask only issue 34's document mask with a reused block mask (blockmask_paired.py).
bench: configure
	@PATH="$(VENV)/bin:$$PATH" $(CMAKE) --build $(BUILD) -j $(JOBS) --target attnc_cli attn_run attnc_runtime attnc_runtime_shared
	@bash bench/setup_bench.sh
	@if [ "$(BENCH_ONLY)" = amx ]; then $(VENV)/bin/python bench/amx_paired.py $(BUILD); fi
	@if [ "$(BENCH_ONLY)" = backward ]; then $(VENV)/bin/python bench/backward_paired.py $(BUILD); fi
	@if [ "$(BENCH_ONLY)" = dropout ]; then $(VENV)/bin/python bench/dropout_paired.py $(BUILD); fi
	@if [ "$(BENCH_ONLY)" = blockmask ]; then $(VENV)/bin/python bench/blockmask_paired.py $(BUILD); fi
	@if [ "$(BENCH_ONLY)" != llm ] && [ "$(BENCH_ONLY)" != amx ] && [ "$(BENCH_ONLY)" != backward ] && \
	  [ "$(BENCH_ONLY)" != dropout ] && [ "$(BENCH_ONLY)" != blockmask ]; then $(VENV)/bin/python bench/run_bench.py $(BUILD); fi
	@if [ "$(BENCH_ONLY)" != lowp ] && [ "$(BENCH_ONLY)" != llm ] && [ "$(BENCH_ONLY)" != amx ] && \
	  [ "$(BENCH_ONLY)" != backward ] && [ "$(BENCH_ONLY)" != dropout ] && [ "$(BENCH_ONLY)" != blockmask ] && \
	  [ -z "$(BENCH_WORKLOADS)" ]; then \
	  $(VENV)/bin/python bench/scaling.py $(BUILD) && $(VENV)/bin/python bench/paired.py $(BUILD); fi
	@if [ "$(BENCH_ONLY)" != f32 ] && [ "$(BENCH_ONLY)" != llm ] && [ "$(BENCH_ONLY)" != amx ] && \
	  [ "$(BENCH_ONLY)" != backward ] && [ "$(BENCH_ONLY)" != dropout ] && [ "$(BENCH_ONLY)" != blockmask ] && \
	  [ -z "$(BENCH_WORKLOADS)" ]; then \
	  $(VENV)/bin/python bench/lowp_paired.py $(BUILD); fi
	@if { [ -z "$(BENCH_ONLY)" ] || [ "$(BENCH_ONLY)" = llm ]; } && [ -z "$(BENCH_WORKLOADS)" ]; then \
	  $(VENV)/bin/python bench/llm_bench.py $(BUILD); fi

# ASan+UBSan over every suite (kernels and the Python binding's included) and TSan over the
# concurrency and runtime suites,
# in trees beside $(BUILD) that reuse its attnc (scripts/check_sanitize.sh).
check-sanitize: build
	@JOBS=$(JOBS) bash scripts/check_sanitize.sh $(BUILD)

# Each libFuzzer target for FUZZ_SECONDS (300) in the ASan+UBSan tree; new inputs stay in that tree.
FUZZ_SECONDS ?= 300
fuzz: build
	@JOBS=$(JOBS) bash scripts/check_sanitize.sh --build-only $(BUILD)
	@cd $(BUILD)/sanitize-address && FUZZ_SECONDS=$(FUZZ_SECONDS) $(CTEST) --output-on-failure -L fuzz

# The randomized differential sweep: SWEEP_CASES random cases per target (this machine's variant
# and the AVX2 one) against the fp64 reference; `make test` runs a fixed share of it (label sweep).
SWEEP_CASES ?= 2000
SWEEP_SEED ?= 1
SWEEP_FIRST ?= 0
sweep: configure
	@PATH="$(VENV)/bin:$$PATH" $(CMAKE) --build $(BUILD) -j $(JOBS) --target kernels_random_sweep_test
	@SWEEP_CASES=$(SWEEP_CASES) SWEEP_SEED=$(SWEEP_SEED) SWEEP_FIRST=$(SWEEP_FIRST) $(BUILD)/tests/kernels/kernels_random_sweep_test

# The AArch64 Linux tree (cross-built, kernels from $(BUILD)'s attnc): runtime, attn-run, examples
# and the arm suites in $(ARM_BUILD); `make test` runs those suites under qemu-user (label arm).
ARM_BUILD ?= $(ROOT)/build-arm
arm: configure
	@PATH="$(VENV)/bin:$$PATH" $(CMAKE) --build $(BUILD) -j $(JOBS) --target attnc_cli
	@JOBS=$(JOBS) ATTNC_FULL_TESTS=$(if $(FULL),ON,OFF) bash scripts/build_arm.sh $(BUILD) $(ARM_BUILD)

clean:
	rm -rf $(BUILD) $(ARM_BUILD)

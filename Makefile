# attnc: `make demo` and `make test` set up everything on a fresh Debian 12 machine.
ROOT := $(abspath .)
VENV := $(ROOT)/.venv
BUILD ?= $(ROOT)/build
JOBS ?= $(shell nproc)
HALIDE_DIR = $(shell $(VENV)/bin/python -c "import halide, os; print(os.path.join(os.path.dirname(halide.__file__), 'lib64', 'cmake', 'Halide'))")
CMAKE := $(VENV)/bin/cmake
CTEST := $(VENV)/bin/ctest

.PHONY: setup configure build test demo bench check-sanitize fuzz sweep arm clean

setup:
	@bash scripts/setup.sh

configure: setup
	@PATH="$(VENV)/bin:$$PATH" $(CMAKE) -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DHalide_DIR=$(HALIDE_DIR) -DCMAKE_MAKE_PROGRAM=$(VENV)/bin/ninja -DATTNC_ARM_BUILD=$(ARM_BUILD) >/dev/null

build: configure
	@PATH="$(VENV)/bin:$$PATH" $(CMAKE) --build $(BUILD) -j $(JOBS)

test: build
	@cd $(BUILD) && PATH="$(VENV)/bin:$$PATH" $(CTEST) --output-on-failure -j $(JOBS) $(CTEST_ARGS)

demo: build
	@bash scripts/demo.sh $(BUILD)

bench: configure
	@PATH="$(VENV)/bin:$$PATH" $(CMAKE) --build $(BUILD) -j $(JOBS) --target attnc_cli attn_run
	@bash bench/setup_bench.sh
	@$(VENV)/bin/python bench/run_bench.py $(BUILD)
	@$(VENV)/bin/python bench/scaling.py $(BUILD)
	@$(VENV)/bin/python bench/paired.py $(BUILD)

# ASan+UBSan over every suite (kernels included) and TSan over the concurrency and runtime suites,
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
	@JOBS=$(JOBS) bash scripts/build_arm.sh $(BUILD) $(ARM_BUILD)

clean:
	rm -rf $(BUILD) $(ARM_BUILD)

# trainbench front door: `make run` (install, build the program, quick suite) and `make test`.
# TORCH=auto|debian|pip chooses the LibTorch (scripts/setup/torch-select.sh): auto takes an installed Python
# torch >= 2.0 and otherwise Debian's libtorch-dev 1.13; pip installs the pinned torch 2.11 into a venv
# outside the clone, reused by every clone on the machine. Each choice builds in its own folder.
TORCH ?= auto
TORCH_KIND := $(shell ./scripts/setup/torch-select.sh kind $(TORCH) 2> /dev/null)
# torch-select.sh has said why on stderr (an unknown TORCH=): stop here, before anything is built.
ifeq ($(TORCH_KIND),)
$(error TORCH=$(TORCH): expected auto, debian or pip)
endif
BUILD ?= build/$(TORCH_KIND)
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
SUITE ?= quick

.PHONY: setup configure build build-program run test test-avx2 bench board-example clean

setup:
	TRAINBENCH_TORCH=$(TORCH_KIND) ./scripts/setup/setup-deps.sh
	./scripts/setup/torch-select.sh install $(TORCH)

configure: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $$(./scripts/setup/torch-select.sh cmake-args $(TORCH_KIND)) $(CMAKE_FLAGS)

# build/trainbench: the program of the latest build, whichever LibTorch it used.
build-program: configure
	cmake --build $(BUILD) -j $(JOBS) --target trainbench
	@if [ "$(abspath $(BUILD))" != "$(abspath build)" ]; then ln -sfn "$(abspath $(BUILD))/trainbench" build/trainbench; fi

build: build-program
	cmake --build $(BUILD) -j $(JOBS)

# The device's ceilings once (cached), fp32 and bf16 (fp16 GEMMs take minutes on a CPU, which cannot
# train in fp16): the first table's %peak column is filled, not dashes.
run: build-program
	build/trainbench peak --if-missing --precision fp32,bf16
	build/trainbench run --suite $(SUITE) --report results/report.html

# The avx2 label is the LibTorch tests again as an AVX2-only CPU runs them (make test-avx2).
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE avx2

test-avx2: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L avx2

bench: build-program
	TRAINBENCH_WITH_PYTHON=1 TRAINBENCH_TORCH=$(TORCH_KIND) ./scripts/setup/setup-deps.sh
	py=$$(./scripts/setup/torch-select.sh python $(TORCH_KIND)) && $$py bench/vs_pytorch.py --build $(BUILD) --python $$py

# The README's board: four committed results files (examples/board/) in a fresh store, as the
# Markdown table and the HTML page (results/board.html).
board-example: build-program
	rm -f results/board-example.sqlite results/board-example.sqlite-wal results/board-example.sqlite-shm
	build/trainbench store import --store results/board-example.sqlite examples/board/*.json > /dev/null
	build/trainbench board --store results/board-example.sqlite --baseline epyc-a/cpu -o results/board.html
	build/trainbench board --store results/board-example.sqlite --baseline epyc-a/cpu

clean:
	rm -rf build

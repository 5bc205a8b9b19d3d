# trainbench front door: `make run` (install, build, quick suite) and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
SUITE ?= quick

.PHONY: setup configure build run test bench clean

setup:
	./scripts/setup-deps.sh

configure: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/trainbench run --suite $(SUITE) --report results/report.html

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	TRAINBENCH_WITH_PYTHON=1 ./scripts/setup-deps.sh
	/usr/bin/python3 bench/vs_pytorch.py --build $(BUILD)

clean:
	rm -rf $(BUILD)

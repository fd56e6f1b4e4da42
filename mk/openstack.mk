# OpenStack test control plane (tests/openstack/, docs/openstack.md).
OPENSTACK_WORKDIR ?= /tmp/mooring-openstack-dev
.PHONY: openstack-install openstack-up openstack-down
openstack-install:  ## build (once) and reuse the OpenStack services venv under $MOORING_CACHE_DIR/openstack
	@tests/openstack/install.sh

openstack-up: openstack-install  ## start a real OpenStack on 127.0.0.1 (OPENSTACK_WORKDIR, OPENSTACK_CINDER=1, OPENSTACK_OCTAVIA=1)
	@tests/openstack/start.sh $(OPENSTACK_WORKDIR)
	@echo "export OS_CLIENT_CONFIG_FILE=$(OPENSTACK_WORKDIR)/clouds.yaml OS_CLOUD=mooring-admin"

openstack-down:  ## stop the OpenStack started by openstack-up (removes OPENSTACK_WORKDIR)
	@tests/openstack/stop.sh $(OPENSTACK_WORKDIR)

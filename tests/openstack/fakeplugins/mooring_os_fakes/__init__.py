"""Test-only neutron plugins for an OpenStack control plane that runs no agents.

Nothing here is shipped with mooring.cluster; tests/openstack/install.sh installs it into the
OpenStack services' own virtualenv.
"""

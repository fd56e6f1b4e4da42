"""Test-only ML2 mechanism driver: binds every port on its first segment.

No L2 agents run in the test control plane, so no stock driver would bind a port and nova
could not boot servers. This driver binds each port as an OVS port with port filtering,
status ACTIVE; nothing is plugged anywhere (the computes use nova's fake driver).
"""

from neutron_lib import constants
from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api


class BindAllMechanismDriver(api.MechanismDriver):
    """Bind every port; no agents, no real data plane."""

    def initialize(self):
        pass

    @property
    def connectivity(self):
        return portbindings.CONNECTIVITY_L2

    def bind_port(self, context):
        for segment in context.segments_to_bind:
            context.set_binding(segment[api.ID], portbindings.VIF_TYPE_OVS,
                                {portbindings.CAP_PORT_FILTER: True},
                                status=constants.PORT_STATUS_ACTIVE)
            return

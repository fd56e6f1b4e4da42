"""Test-only L3 service plugin: floating IPs become ACTIVE when associated.

Without an L3 agent a floating IP would stay DOWN forever; this subclass of neutron's own
L3 router plugin sets the status an agent would report (ACTIVE with a port, DOWN without).
"""

from neutron.services.l3_router import l3_router_plugin
from neutron_lib import constants


def _status(fip):
    if fip.get('port_id'):
        return constants.FLOATINGIP_STATUS_ACTIVE
    return constants.FLOATINGIP_STATUS_DOWN


class ActiveFloatingIPL3Plugin(l3_router_plugin.L3RouterPlugin):
    """Neutron's L3 router plugin, with the floating IP status an agent would set."""

    def create_floatingip(self, context, floatingip):
        fip = super().create_floatingip(context, floatingip)
        return self._set_status(context, fip)

    def update_floatingip(self, context, id, floatingip):
        fip = super().update_floatingip(context, id, floatingip)
        return self._set_status(context, fip)

    def _set_status(self, context, fip):
        status = _status(fip)
        if fip.get('status') != status:
            self.update_floatingip_status(context, fip['id'], status)
            fip['status'] = status
        return fip

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the base of the host modules (standard library and ansible.module_utils only).

A host module is a subclass of :class:`MooringModule` that declares its ``argument_spec`` (and any other
AnsibleModule keyword in ``module_kwargs``) and implements :meth:`MooringModule.run`, which returns the
result dict. The base builds the AnsibleModule, runs :meth:`~MooringModule.run` and turns the errors named
in ``errors`` (``MooringError`` by default) into ``fail_json(msg=str(exc))``; a module that returns more on a
failure (or words the message differently) overrides :meth:`~MooringModule.failure`::

    class EtcdHealth(MooringModule):
        argument_spec = {...}

        def run(self):
            return dict(changed=False, **state)


    def main():
        EtcdHealth().execute()
"""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import MooringError


class MooringModule:
    """One run of a host module: ``self.module`` (the AnsibleModule), ``self.params``, ``self.check_mode``."""

    argument_spec = {}
    module_kwargs = {}
    supports_check_mode = True
    errors = (MooringError,)

    def __init__(self):
        self.module = AnsibleModule(argument_spec=self.spec(), supports_check_mode=self.supports_check_mode,
                                    **self.module_kwargs)
        self.params = self.module.params
        self.check_mode = self.module.check_mode

    def spec(self):
        """The argument spec; override when it is computed (shared option sets)."""
        return dict(self.argument_spec)

    def run(self):
        """Do the module's work; return the result dict for ``exit_json``."""
        raise NotImplementedError

    def failure(self, exc):
        """The ``fail_json`` keywords for ``exc`` (one of ``errors``): its message, by default."""
        return {"msg": str(exc)}

    def fail(self, msg, **extra):
        """Fail the task now with ``msg`` and ``extra`` return keys."""
        self.module.fail_json(msg=msg, **extra)

    def command(self, argv):
        """``run_command(argv)`` in the C locale (for output that is parsed)."""
        return self.module.run_command(argv, environ_update={"LC_ALL": "C"})

    def execute(self):
        """Run the module: ``exit_json`` with the result of :meth:`run`, or ``fail_json`` with its failure."""
        try:
            result = self.run()
        except self.errors as exc:
            self.module.fail_json(**self.failure(exc))
        self.module.exit_json(**result)

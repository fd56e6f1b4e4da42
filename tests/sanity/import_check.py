# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fast stand-in for ansible-test's import sanity test, for the lint stage.

Imports every module and module_util of the collection in a fresh interpreter where only the
standard library, ansible-core and this collection can be imported, as on a managed host.
An unguarded third-party import (PyYAML, cryptography, jsonschema …) fails here in seconds
instead of minutes later in `ansible-test sanity`. Usage: python tests/sanity/import_check.py
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREFIX = "ansible_collections.mooring.cluster.plugins"

BLOCKER = r'''
import sys
ALLOWED = set(sys.stdlib_module_names) | {"ansible", "ansible_collections", "__future__"}
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] not in ALLOWED:
            raise ImportError("No module named %r (not available on a managed host)" % name)
        return None
sys.meta_path.insert(0, Blocker())
import importlib
importlib.import_module(sys.argv[1])
'''


def main():
    failures = 0
    for kind in ("module_utils", "modules"):
        folder = os.path.join(ROOT, "plugins", kind)
        for here, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            for name in sorted(files):
                if not name.endswith(".py") or name == "__init__.py":
                    continue
                rel = os.path.relpath(os.path.join(here, name[:-3]), folder)
                module = "%s.%s.%s" % (PREFIX, kind, rel.replace(os.sep, "."))
                run = subprocess.run([sys.executable, "-c", BLOCKER, module], capture_output=True, text=True, check=False)
                if run.returncode:
                    failures += 1
                    last = (run.stderr.strip().splitlines() or ["?"])[-1]
                    sys.stdout.write("plugins/%s/%s.py: %s\n" % (kind, rel, last))
    if failures:
        sys.stdout.write("%d file(s) import a library a managed host may lack without a guard "
                         "(try/except ImportError, then missing_required_lib or a domain error)\n" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-in for the get-pip.py bootstrap script that ansible-test downloads.

ansible-test creates a virtual environment per sanity test and bootstraps pip into it with a
script fetched from a host this project's machines cannot reach. scripts/test.sh places this
file where ansible-test caches that script. It bootstraps pip from the wheel bundled with the
standard library (ensurepip), gives the new environment the pip settings of the environment
that ran scripts/test.sh (ansible-test strips the environment, and with it the CA bundle the
package index needs here), and installs the pinned packages ansible-test asked for.
"""

import ensurepip
import os
import shutil
import subprocess
import sys

ensurepip.bootstrap(upgrade=True)
# ensurepip leaves PIP_CONFIG_FILE=/dev/null behind, which would hide every pip setting.
os.environ.pop("PIP_CONFIG_FILE", None)
os.environ.pop("ENSUREPIP_OPTIONS", None)
settings = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mooring-pip.conf")
if os.path.exists(settings):
    shutil.copyfile(settings, os.path.join(sys.prefix, "pip.conf"))
args = [arg for arg in sys.argv[1:] if arg not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "--quiet"] + args))

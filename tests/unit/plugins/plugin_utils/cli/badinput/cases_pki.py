# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Broken and hostile PKI directories and PKI requests for ``mooring pki generate``, ``list`` and
``status`` (ids ``pki-``).

A case that needs a healthy PKI first lays one out in ``setup`` with the backend itself
(:func:`ensure_pki`, a small request), then breaks one thing. Every case ends with exit 1 (2 for
``status`` when the directory cannot be trusted) and writes nothing: no CA or leaf is silently
made again, no mode is fixed, nothing outside the tree (``{root}/outside``) is touched.
"""

from __future__ import annotations

import datetime
import os
import random
import shutil
import socket

from .harness import Case

REQUEST = "etcd: [{name: e1, addresses: [10.0.0.1]}, {name: e2, addresses: [10.0.0.2]}]\nkubelets: [w1]\n"
REQUEST_DICT = {"etcd": [{"name": "e1", "addresses": ["10.0.0.1"]}, {"name": "e2", "addresses": ["10.0.0.2"]}],
                "kubelets": ["w1"]}
GENERATE = ["pki", "generate", "--dir", "{work}/pki", "--config", "{work}/req.yml"]
LIST = ["pki", "list", "--dir", "{work}/pki"]
STATUS = ["pki", "status", "--dir", "{work}/pki"]
CA_HINT = r"; a CA is replaced only when asked: new_ca \[%s\] \(CLI --new-ca %s\)"
SA_HINT = r"; a new key pair is made only when asked: new_ca \[sa\]"
LEAF_HINT = r"; re-issue it with force \[%s\] \(CLI --force %s\), or every broken leaf with reissue_broken"


def _pki():
    from ansible_collections.mooring.cluster.plugins.module_utils.cluster.pki import pki

    return pki


def _healthy(work, **kwargs):
    d = os.path.join(work, "pki")
    _pki().ensure_pki(d, REQUEST_DICT, **kwargs)
    return d


def _read(d, name):
    with open(os.path.join(d, name), "rb") as handle:
        return handle.read()


def _put(d, name, data):
    with open(os.path.join(d, name), "wb") as handle:
        handle.write(data)


def _swap(d, a, b):
    pa, pb = os.path.join(d, a), os.path.join(d, b)
    os.rename(pa, pa + ".swap")
    os.rename(pb, pa)
    os.rename(pa + ".swap", pb)


def _encrypted(d, name):
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(_read(d, name), password=None)
    _put(d, name, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.BestAvailableEncryption(b"secret")))


def _ed25519_ca(d):
    """A well-formed, self-signed CA CN=kubernetes whose key is Ed25519 (it cannot sign leaves here)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519
    from cryptography.x509.oid import NameOID

    key = ed25519.Ed25519PrivateKey.generate()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, None))
    _put(d, "ca.crt", cert.public_bytes(serialization.Encoding.PEM))
    _put(d, "ca.key", key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()))


def broken(change, **kwargs):
    """A setup: a healthy PKI under {work}/pki, then ``change(pki_dir)``."""
    def setup(work):
        change(_healthy(work, **kwargs))
    return setup


def outside(work, *parts):
    return os.path.join(os.path.dirname(work), "outside", *parts)


def _link_key_outside(d, name="apiserver.key"):
    """The key moved to {root}/outside (mode 0644: what the mode fix would chmod) and linked back."""
    target = outside(os.path.dirname(d), os.path.basename(name))
    shutil.move(os.path.join(d, name), target)
    os.chmod(target, 0o644)
    os.symlink(target, os.path.join(d, name))


def _link_dir_outside(d, sub="kubeconfig"):
    target = outside(os.path.dirname(d), sub)
    shutil.move(os.path.join(d, sub), target)
    os.chmod(target, 0o740)  # not 0700: what the mode fix would chmod
    os.symlink(target, os.path.join(d, sub))


def _fifo(d, name):
    if os.path.exists(os.path.join(d, name)):
        os.unlink(os.path.join(d, name))
    os.mkfifo(os.path.join(d, name))


def _socket(d, name):
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(os.path.join(d, name))
    finally:
        sock.close()


def _garbage(n=600, seed=7):
    return bytes(random.Random(seed).getrandbits(8) for _i in range(n))


def gen_case(id, change, stderr, argv=None, **kwargs):
    return Case("pki-" + id, GENERATE if argv is None else argv, files={"req.yml": REQUEST}, setup=broken(change, **kwargs), stderr=stderr)


CASES = [
    # -- a broken CA or key pair: an error, never a silent new CA ------------------------------------
    gen_case("ca-crt-garbage", lambda d: _put(d, "ca.crt", b"garbage\n"),
             r"pki/ca\.crt is not a PEM X\.509 certificate" + CA_HINT % ("ca", "ca")),
    gen_case("ca-crt-empty", lambda d: _put(d, "ca.crt", b""), r"pki/ca\.crt is empty" + CA_HINT % ("ca", "ca")),
    gen_case("ca-crt-truncated", lambda d: _put(d, "ca.crt", _read(d, "ca.crt")[:300]),
             r"pki/ca\.crt is not a PEM X\.509 certificate"),
    gen_case("ca-key-garbage", lambda d: _put(d, "ca.key", b"-----BEGIN EC PRIVATE KEY-----\nAAAA\n"),
             r"pki/ca\.key is not a PEM private key" + CA_HINT % ("ca", "ca")),
    gen_case("ca-key-utf16", lambda d: _put(d, "ca.key", _read(d, "ca.key").decode().encode("utf-16")),
             r"pki/ca\.key is not a PEM private key"),
    gen_case("ca-key-encrypted", lambda d: _encrypted(d, "ca.key"), r"pki/ca\.key is an encrypted private key"),
    gen_case("ca-key-missing", lambda d: os.unlink(os.path.join(d, "ca.key")),
             r"pki/ca\.key is missing while ca\.crt is there \(half a CA\)" + CA_HINT % ("ca", "ca")),
    gen_case("ca-crt-missing", lambda d: os.unlink(os.path.join(d, "ca.crt")),
             r"pki/ca\.crt is missing while ca\.key is there"),
    gen_case("ca-key-huge", lambda d: _put(d, "ca.key", b"A" * (1024 * 1024 + 1)),
             r"pki/ca\.key is 1048577 bytes, more than a PEM file holds"),
    gen_case("ca-keys-swapped-with-etcd", lambda d: _swap(d, "ca.key", "etcd/ca.key"),
             r"pki/ca\.key does not match ca\.crt(.|\n)*pki/etcd/ca\.key does not match etcd/ca\.crt"),
    gen_case("cas-swapped-with-front-proxy", lambda d: (_swap(d, "ca.crt", "front-proxy-ca.crt"),
                                                        _swap(d, "ca.key", "front-proxy-ca.key")),
             r"pki/ca\.crt is CN=front-proxy-ca, the subject of front-proxy-ca\.crt \(CA files swapped or copied\?\)"),
    gen_case("ca-is-a-leaf", lambda d: (shutil.copy(os.path.join(d, "apiserver.crt"), os.path.join(d, "ca.crt")),
                                        shutil.copy(os.path.join(d, "apiserver.key"), os.path.join(d, "ca.key"))),
             r"pki/ca\.crt is not a CA certificate \(no BasicConstraints CA:TRUE\)"),
    gen_case("ca-ed25519", _ed25519_ca, r"pki/ca\.key holds a key of type Ed25519; a CA here signs with an RSA or ECDSA"),
    gen_case("ca-expiring", lambda d: None,
             r"pki/ca\.crt expires \d{4}-\d\d-\d\dT[\d:]+Z, within renew_before_days \(30\); a CA is not renewed in "
             r"passing: rotate it \(docs/pki\.md, 'CA rotation'\), starting with new_ca \[ca\]",
             now=datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=3640)),
    gen_case("etcd-ca-crt-binary", lambda d: _put(d, "etcd/ca.crt", _garbage()),
             r"pki/etcd/ca\.crt is not a PEM X\.509 certificate" + CA_HINT % ("etcd/ca", "etcd/ca")),
    gen_case("etcd-ca-key-of-front-proxy", lambda d: shutil.copy(os.path.join(d, "front-proxy-ca.key"),
                                                                 os.path.join(d, "etcd/ca.key")),
             r"pki/etcd/ca\.key does not match etcd/ca\.crt"),
    gen_case("front-proxy-ca-crt-truncated", lambda d: _put(d, "front-proxy-ca.crt", _read(d, "front-proxy-ca.crt")[:-80]),
             r"pki/front-proxy-ca\.crt is not a PEM X\.509 certificate" + CA_HINT % ("front-proxy-ca", "front-proxy-ca")),
    gen_case("front-proxy-ca-key-empty", lambda d: _put(d, "front-proxy-ca.key", b"\n\n"),
             r"pki/front-proxy-ca\.key is empty"),
    gen_case("sa-key-garbage", lambda d: _put(d, "sa.key", b"not a key"), r"pki/sa\.key is not a PEM private key" + SA_HINT),
    gen_case("sa-pub-garbage", lambda d: _put(d, "sa.pub", _garbage(200)), r"pki/sa\.pub is not a PEM public key" + SA_HINT),
    gen_case("sa-key-of-another-pair", lambda d: shutil.copy(os.path.join(d, "kubeconfig/admin.key"),
                                                             os.path.join(d, "sa.key")),
             r"pki/sa\.pub does not match sa\.key" + SA_HINT),
    gen_case("sa-pub-missing", lambda d: os.unlink(os.path.join(d, "sa.pub")),
             r"pki/sa\.pub is missing while sa\.key is there \(half a key pair\)"),
    gen_case("ca-broken-force-all-reissue-broken", lambda d: _put(d, "ca.key", b"x"),
             r"pki/ca\.key is not a PEM private key" + CA_HINT % ("ca", "ca"),
             argv=GENERATE + ["--force", "all", "--reissue-broken"]),
    gen_case("ca-broken-check-mode", lambda d: _put(d, "etcd/ca.crt", b"x"),
             r"pki/etcd/ca\.crt is not a PEM X\.509 certificate", argv=GENERATE + ["--check"]),

    # -- a broken leaf: reported, re-issued only when asked -------------------------------------------
    gen_case("leaf-crt-garbage", lambda d: _put(d, "apiserver.crt", b"hello\n"),
             r"pki/apiserver\.crt is not a PEM X\.509 certificate" + LEAF_HINT % ("apiserver", "apiserver")),
    gen_case("leaf-crt-empty", lambda d: _put(d, "kubeconfig/admin.crt", b""),
             r"pki/kubeconfig/admin\.crt is empty" + LEAF_HINT % ("kubeconfig/admin", "kubeconfig/admin")),
    gen_case("leaf-crt-truncated", lambda d: _put(d, "etcd/members/e1/peer.crt", _read(d, "etcd/members/e1/peer.crt")[:120]),
             r"pki/etcd/members/e1/peer\.crt is not a PEM X\.509 certificate"),
    gen_case("leaf-crt-utf16", lambda d: _put(d, "front-proxy-client.crt",
                                              _read(d, "front-proxy-client.crt").decode().encode("utf-16")),
             r"pki/front-proxy-client\.crt is not a PEM X\.509 certificate"),
    gen_case("leaf-crt-binary", lambda d: _put(d, "apiserver-etcd-client.crt", _garbage(4096, seed=3)),
             r"pki/apiserver-etcd-client\.crt is not a PEM X\.509 certificate"),
    gen_case("leaf-crt-is-its-key", lambda d: shutil.copy(os.path.join(d, "kubeconfig/scheduler.key"),
                                                          os.path.join(d, "kubeconfig/scheduler.crt")),
             r"pki/kubeconfig/scheduler\.crt is not a PEM X\.509 certificate"),
    gen_case("leaf-crt-huge", lambda d: _put(d, "kubeconfig/kubelet-w1.crt", b"-" * (3 * 1024 * 1024)),
             r"pki/kubeconfig/kubelet-w1\.crt is 3145728 bytes, more than a PEM file holds"),
    gen_case("leaf-key-garbage", lambda d: _put(d, "apiserver.key", b"\x00" * 64),
             r"pki/apiserver\.key is not a PEM private key" + LEAF_HINT % ("apiserver", "apiserver")),
    gen_case("leaf-key-encrypted", lambda d: _encrypted(d, "kubeconfig/super-admin.key"),
             r"pki/kubeconfig/super-admin\.key is an encrypted private key"),
    gen_case("leaf-key-of-another-member", lambda d: shutil.copy(os.path.join(d, "etcd/members/e2/server.key"),
                                                                 os.path.join(d, "etcd/members/e1/server.key")),
             r"pki/etcd/members/e1/server\.key does not match etcd/members/e1/server\.crt \(it is another key pair's key\)"
             + LEAF_HINT % ("etcd/members/e1/server", "etcd/members/e1/server")),
    gen_case("leaf-is-a-ca", lambda d: (shutil.copy(os.path.join(d, "front-proxy-ca.crt"), os.path.join(d, "front-proxy-client.crt")),
                                        shutil.copy(os.path.join(d, "front-proxy-ca.key"), os.path.join(d, "front-proxy-client.key"))),
             r"pki/front-proxy-client\.crt is a CA certificate where a leaf certificate belongs"),
    gen_case("leaf-broken-check-mode", lambda d: _put(d, "apiserver.crt", b"x"),
             r"pki/apiserver\.crt is not a PEM", argv=GENERATE + ["--check"]),
    gen_case("leaf-broken-force-names-another", lambda d: _put(d, "kubeconfig/admin.key", b"x"),
             r"pki/kubeconfig/admin\.key is not a PEM private key", argv=GENERATE + ["--force", "apiserver"]),
    gen_case("two-leaves-broken", lambda d: (_put(d, "apiserver.crt", b"x"), _put(d, "etcd/healthcheck-client.key", b"y")),
             r"pki/apiserver\.crt is not a PEM(.|\n)*pki/etcd/healthcheck-client\.key is not a PEM private key"),

    # -- links and special files inside the PKI directory ----------------------------------------------
    gen_case("symlink-key-outside", _link_key_outside,
             r"pki/apiserver\.key is a symbolic link; the PKI directory holds only regular files and directories"),
    gen_case("symlink-ca-key-outside-force-all", lambda d: _link_key_outside(d, "ca.key"),
             r"pki/ca\.key is a symbolic link", argv=GENERATE + ["--force", "all", "--reissue-broken"]),
    gen_case("symlink-subdir-outside", _link_dir_outside, r"pki/kubeconfig is a symbolic link"),
    gen_case("symlink-dangling", lambda d: os.symlink("/nonexistent/mooring", os.path.join(d, "stray.crt")),
             r"pki/stray\.crt is a symbolic link"),
    gen_case("symlink-loop", lambda d: os.symlink("loop", os.path.join(d, "etcd", "loop")), r"pki/etcd/loop is a symbolic link"),
    gen_case("symlink-inside-to-inside", lambda d: (os.unlink(os.path.join(d, "sa.pub")),
                                                    os.symlink("sa.key", os.path.join(d, "sa.pub"))),
             r"pki/sa\.pub is a symbolic link"),
    gen_case("fifo-in-dir", lambda d: _fifo(d, "etcd/ca.srl"), r"pki/etcd/ca\.srl is a special file \(FIFO, socket or device\)"),
    gen_case("fifo-as-certificate", lambda d: _fifo(d, "apiserver.crt"), r"pki/apiserver\.crt is a special file"),
    gen_case("socket-in-dir", lambda d: _socket(d, "agent.sock"), r"pki/agent\.sock is a special file"),
    gen_case("directory-as-certificate", lambda d: (os.unlink(os.path.join(d, "apiserver.crt")),
                                                    os.mkdir(os.path.join(d, "apiserver.crt"))),
             r"pki/apiserver\.crt is a directory where a certificate or key file belongs"),
    gen_case("file-as-directory", lambda d: (shutil.rmtree(os.path.join(d, "etcd", "members")),
                                             _put(d, "etcd/members", b"x")),
             r"pki/etcd/members is a file where a directory of the PKI belongs \(it should hold e1/server\.crt\)"),
    Case("pki-dir-dangling-link", GENERATE, files={"req.yml": REQUEST},
         setup=lambda work: os.symlink(os.path.join(work, "nowhere"), os.path.join(work, "pki")),
         stderr=r"path: .*/pki is a symbolic link to nothing"),

    # -- list and status on broken directories: reported, exit 1 (status: 2 when it cannot trust it) ----
    gen_case("list-crt-garbage", lambda d: _put(d, "apiserver.crt", b"hello\n"),
             r"error: .*/pki: apiserver\.crt is not a PEM X\.509 certificate", argv=LIST),
    gen_case("list-key-mismatch", lambda d: shutil.copy(os.path.join(d, "ca.key"), os.path.join(d, "kubeconfig/admin.key")),
             r"error: .*/pki: kubeconfig/admin\.key does not match kubeconfig/admin\.crt", argv=LIST + ["--json"]),
    gen_case("list-symlink", _link_key_outside, r"pki/apiserver\.key is a symbolic link", argv=LIST),
    gen_case("list-fifo", lambda d: _fifo(d, "kubeconfig/kubelet-w1.crt"), r"pki/kubeconfig/kubelet-w1\.crt is a special file",
             argv=LIST),
    Case("pki-list-dir-is-file", LIST, files={"pki": "x"}, stderr=r"path: .*/pki is not a directory"),
    gen_case("status-crt-garbage", lambda d: _put(d, "apiserver.crt", _garbage()),
             r"error: .*/pki: apiserver\.crt is not a PEM X\.509 certificate", argv=STATUS),
    gen_case("status-ca-key-broken", lambda d: _put(d, "etcd/ca.key", b""),
             r"error: .*/pki: etcd/ca\.key is empty", argv=STATUS + ["--json"]),
    Case("pki-status-symlink-subdir", STATUS, setup=broken(_link_dir_outside), exit=(2,),
         stderr=r"pki/kubeconfig is a symbolic link"),
    Case("pki-status-fifo-certificate", STATUS, setup=broken(lambda d: _fifo(d, "ca.crt")), exit=(2,),
         stderr=r"pki/ca\.crt is a special file"),
    Case("pki-status-config-utf16", STATUS + ["--config", "{work}/req.yml"], setup=broken(lambda d: None), exit=(2,),
         files={"req.yml": REQUEST.encode("utf-16")}, stderr=r"req\.yml: UTF-16/32 text is not supported"),
]


# -- --config: a request that is not one ----------------------------------------------------------------
def _bomb():
    lines = ["a0: &a0 [x,x,x,x,x,x,x,x,x,x]"]
    lines += ["a%d: &a%d [%s]" % (i, i, ",".join(["*a%d" % (i - 1)] * 10)) for i in range(1, 9)]
    return "\n".join(lines) + "\nkubelets: *a8\n"


CONFIGS = [
    ("list", "- etcd\n- kubelets\n", r"req\.yml must hold a mapping of PKI options .*got a list"),
    ("string", "hello\n", r"req\.yml must hold a mapping of PKI options .*got a string"),
    ("int", "42\n", r"req\.yml must hold a mapping .*got a number"),
    ("validity-string", "validity_days: soon\n", r"validity_days: must be a positive integer \(days\), not 'soon'"),
    ("validity-bool", "validity_days: true\n", r"validity_days: must be a positive integer \(days\), not True"),
    ("validity-huge", "validity_days: 3000000\n", r"validity_days: must be at most 36500 days \(100 years\), not 3000000"),
    ("ca-validity-huge", "ca_validity_days: 1000000000\n", r"ca_validity_days: must be at most 36500 days"),
    ("leaf-outlives-ca", "ca_validity_days: 100\nvalidity_days: 5000\n",
     r"validity_days \(5000\) must not be longer than ca_validity_days \(100\): a certificate would outlive"),
    ("renew-not-below-validity", "validity_days: 30\nrenew_before_days: 30\n",
     r"renew_before_days \(30\) must be smaller than validity_days \(30\)"),
    ("etcd-int", "etcd: 3\n", r"etcd: must be a list, not 3"),
    ("kubelets-string", "kubelets: w1\n", r"kubelets: must be a list, not 'w1'"),
    ("kubelets-mapping", "kubelets: {w1: x}\n", r"kubelets: must be a list"),
    ("member-name-list", "control_plane: [{name: [a, b]}]\n", r"control_plane\[0\]\.name: \['a', 'b'\] is not a valid DNS-1123"),
    ("member-address-mapping", "etcd: [{name: e1, addresses: [{a: 1}]}]\n", r"etcd\[0\]\.addresses\[0\]: \{'a': 1\} is not an IP"),
    ("member-unknown-key", "etcd: [{name: e1, ip: 10.0.0.1}]\n", r"etcd\[0\]: unknown key\(s\) ip; allowed: name, addresses, names"),
    ("endpoint-list", "control_plane_endpoint: [a, b]\n", r"control_plane_endpoint: must be a string"),
    ("key-type-list", "key_type: [rsa]\n", r"key_type: \['rsa'\] is not one of ecdsa, rsa"),
    ("service-cidr-int", "service_cidr: 10\n", r"service_cidr: 10 is not a network in CIDR form"),
    ("unknown-key", "etcd: []\nca_key: /etc/passwd\n", r"unknown PKI option\(s\): ca_key; allowed: "),
    ("int-and-null-keys", "1: a\n~: b\n", r"unknown PKI option\(s\): 1, None; allowed"),
    ("new-ca-in-file", "new_ca: [ca]\n", r"req\.yml: new_ca is chosen on the command line \(--new-ca, --reissue-broken\)"),
    ("long-name", "kubelets: [%s]\n" % ("n" * 5000), r"kubelets\[0\]: 'n{20,80}\.\.\. is not a valid DNS-1123 name"),
    ("alias", "a: &x [w1]\nkubelets: *x\n", r"req\.yml: aliases \(\*name\) are not allowed here"),
    ("alias-bomb", _bomb(), r"req\.yml: aliases \(\*name\) are not allowed here"),
    ("utf16", ("\ufeff" + REQUEST).encode("utf-16-le"), r"req\.yml: UTF-16/32 text is not supported; save it as UTF-8"),
    ("latin1", "kubelets: [caf\xe9]\n".encode("latin-1"), r"req\.yml: not UTF-8 \(byte 0xe9 at offset 14\)"),
    ("nul", b"kubelets: [w1]\x00\n", r"req\.yml: NUL byte at offset 14"),
    ("deep-nesting", "kubelets: " + "[" * 10000 + "]" * 10000 + "\n", r"req\.yml: nested deeper than 64 levels"),
    ("huge", "# " + "x" * (1024 * 1024 + 10) + "\n", r"req\.yml: \d+ bytes; the limit is 1048576"),
    ("bad-yaml", "etcd: [{name: e1\n", r"req\.yml is not valid YAML: expected ',' or '}'"),
    ("tab-indent", "etcd:\n\t- e1\n", r"req\.yml is not valid YAML"),
]
CASES += [Case("pki-config-" + id, GENERATE, files={"req.yml": content}, stderr=regex) for id, content, regex in CONFIGS]

CASES += [
    Case("pki-config-is-a-directory", GENERATE, files={"req.yml": None}, stderr=r"req\.yml: Is a directory"),
    Case("pki-config-fifo", GENERATE, setup=lambda work: os.mkfifo(os.path.join(work, "req.yml")),
         stderr=r"req\.yml: not a regular file"),
    Case("pki-config-missing", GENERATE, stderr=r"req\.yml: No such file or directory"),
    Case("pki-status-days-huge", STATUS + ["--days", "1000000000"], setup=broken(lambda d: None), exit=(2,),
         stderr=r"argument --days: '1000000000': at most 36500 days \(100 years\)"),
    Case("pki-status-config-missing", STATUS + ["--config", "{work}/req.yml"], setup=broken(lambda d: None), exit=(2,),
         stderr=r"^error: --config: .*/req\.yml: No such file or directory\n$"),

    # -- --dir that cannot be the PKI directory ------------------------------------------------------
    Case("pki-dir-is-a-file", GENERATE, files={"req.yml": REQUEST, "pki": "not a directory\n"},
         stderr=r"path: .*/work/pki exists and is not a directory"),
    Case("pki-dir-below-a-file", ["pki", "generate", "--dir", "{work}/afile/sub/pki", "--config", "{work}/req.yml"],
         files={"req.yml": REQUEST, "afile": "x"}, stderr=r"path: .*/afile/sub/pki is below .*/work/afile, which is not a directory"),
    Case("pki-dir-unwritable", ["pki", "generate", "--dir", "/proc/sys/mooring-test-pki", "--config", "{work}/req.yml"],
         files={"req.yml": REQUEST}, stderr=r"(not writable|cannot create PKI directory /proc/sys/mooring-test-pki)"),
    Case("pki-dir-empty", ["pki", "generate", "--dir", "", "--config", "{work}/req.yml"], files={"req.yml": REQUEST},
         stderr=r"path: give the PKI directory on the controller"),

    # -- what to re-issue: only certificates, only leaves by force -----------------------------------
    Case("pki-force-unknown", GENERATE + ["--force", "no-such-cert"], files={"req.yml": REQUEST},
         stderr=r"force: unknown certificate\(s\) no-such-cert; known: all, apiserver"),
    Case("pki-force-huge-name", GENERATE + ["--force", "x" * 20000], files={"req.yml": REQUEST},
         stderr=r"force: unknown certificate\(s\) 'x{20,80}\.\.\.; known"),
    Case("pki-force-a-ca", GENERATE + ["--force", "etcd/ca"], setup=broken(lambda d: None), files={"req.yml": REQUEST},
         stderr=r"force: etcd/ca: a CA or the service-account key pair is not renewed by force; a new one is asked for "
                r"with new_ca \(CLI --new-ca\)"),
    Case("pki-new-ca-not-a-ca", GENERATE + ["--new-ca", "apiserver"], setup=broken(lambda d: None), files={"req.yml": REQUEST},
         stderr=r"new_ca: apiserver is not a CA; known: ca, etcd/ca, front-proxy-ca, sa"),
]

# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PRIVATE to mooring.cluster: the CycloneDX SBOM of an air-gap bundle (controller only).

``<bundle file>.cdx.json`` lists everything the bundle carries, made with the maintained
``cyclonedx-python-lib`` and checked with that library's JSON schema validator before it is
written:

- ``metadata.component``: the bundle (name: the installer, version: the bundle id, i.e. the
  SHA-256 of the signed ``bundle.json``; lock digest, spec hash and signer as properties);
- one component per add-on package (``packages/<addon>-<version>-<key12>.tar``, its sha256),
  holding as nested components every artifact of that package: binaries and release archives
  (``pkg:generic``), Debian packages (``pkg:deb/debian/NAME@VERSION?arch=...``), container
  images (``pkg:oci/NAME@sha256:...``), wheels (``pkg:pypi``), manifests and charts. Each has
  its sha256, its source URL as a ``distribution`` external reference and the add-on it belongs
  to as the property ``mooring:addon``;
- the dependency graph bundle -> add-ons -> artifacts.

The output is deterministic: the serial number is a UUIDv5 of the bundle id, nothing else is
random, and there is no wall-clock timestamp (``metadata.timestamp`` is left out unless
``SOURCE_DATE_EPOCH`` is set, the reproducible-builds convention). The same bundle always gives
the same bytes, so a re-run with nothing changed rewrites nothing.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
import uuid

try:
    from cyclonedx.exception import MissingOptionalDependencyException
    from cyclonedx.model import ExternalReference, ExternalReferenceType, HashAlgorithm, HashType, Property, XsUri
    from cyclonedx.model.bom import Bom, BomMetaData
    from cyclonedx.model.component import Component, ComponentType
    from cyclonedx.model.tool import ToolRepository
    from cyclonedx.output.json import JsonV1Dot6
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator
    from packageurl import PackageURL

    HAS_CYCLONEDX = True
    CYCLONEDX_IMPORT_ERROR = None
    try:  # metadata.lifecycles: cyclonedx-python-lib 8.x added it during the series
        from cyclonedx.model.lifecycle import LifecyclePhase, PredefinedLifecycle
    except ImportError:
        LifecyclePhase = PredefinedLifecycle = None
except ImportError as _cdx_exc:  # an optional controller library; the guard keeps sanity's import test honest
    HAS_CYCLONEDX = False
    CYCLONEDX_IMPORT_ERROR = _cdx_exc

from ansible_collections.mooring.cluster.plugins.module_utils.bundle.format import BundleError
from ansible_collections.mooring.cluster.plugins.module_utils.common.errors import missing_library
from ansible_collections.mooring.cluster.plugins.module_utils.common.images import split_tag

PIP_PACKAGE = "cyclonedx-python-lib"
# The library's JSON validator runs on jsonschema (>= 4.18, with referencing), a requirement of the collection.
VALIDATOR_PACKAGE = "jsonschema>=4.18"
SPEC_VERSION = "1.6"
SUFFIX = ".cdx.json"
TOOL_GROUP, TOOL_NAME = "mooring", "mooring.cluster"
TOOL_VERSION = "0.1.0"  # when neither galaxy.yml nor MANIFEST.json is beside the collection
# uuid5 namespace of bundle SBOM serial numbers: uuid5(NAMESPACE_URL, "urn:mooring.cluster:bundle-sbom").
SERIAL_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "urn:mooring.cluster:bundle-sbom")
# The component type of each kind of file a package carries (package.json's ``kind``).
KIND_TYPES = {"binary": "APPLICATION", "archive": "FILE", "manifest": "FILE", "chart": "FILE",
              "wheel": "LIBRARY", "deb": "LIBRARY", "image": "CONTAINER"}
_DEB_ARCH = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
_WHEEL = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._]*)-([0-9][^-]*)-.+\.whl$")


class SbomError(BundleError):
    """The SBOM could not be made or does not validate against the CycloneDX schema."""


def sbom_path(bundle_path):
    """Where the SBOM of ``bundle_path`` is written: beside it, ``<bundle file>.cdx.json``."""
    return bundle_path + SUFFIX


def require():
    """Raise :class:`SbomError` naming the pip package when the library (or its validator) is missing,
    or when ``SOURCE_DATE_EPOCH`` is set but is not a whole number of seconds."""
    if not HAS_CYCLONEDX:
        raise missing_library(PIP_PACKAGE, "to write the bundle's SBOM", CYCLONEDX_IMPORT_ERROR, SbomError)
    try:
        import jsonschema  # noqa: F401 - what the library's JSON validator runs on
        import referencing  # noqa: F401
    except ImportError as exc:
        raise missing_library(VALIDATOR_PACKAGE, "to validate the bundle's SBOM", exc, SbomError) from None
    _source_date()


def _source_date():
    value = os.environ.get("SOURCE_DATE_EPOCH")
    if value is None or value == "":
        return None
    import datetime

    if not value.isdigit() or len(value) > 12:
        raise SbomError("SOURCE_DATE_EPOCH=%r: not a whole number of seconds since 1970 (unset it to leave the "
                        "SBOM without a timestamp)" % value[:40])
    return datetime.datetime.fromtimestamp(int(value), datetime.timezone.utc)


def tool_version():
    """The collection's version: galaxy.yml (a source tree) or MANIFEST.json (an installed collection)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        with open(os.path.join(root, "MANIFEST.json"), encoding="utf-8") as handle:
            return str(json.load(handle)["collection_info"]["version"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        with open(os.path.join(root, "galaxy.yml"), encoding="utf-8") as handle:
            for line in handle:
                match = re.match(r"""^version:\s*['"]?([0-9A-Za-z.+-]+)""", line)
                if match:
                    return match.group(1)
    except (OSError, UnicodeDecodeError):
        pass
    return TOOL_VERSION


def _library_version():
    try:
        from importlib.metadata import version
        return version("cyclonedx-python-lib")
    except Exception:  # noqa: BLE001 - only a label in the SBOM's tools
        return None


# --------------------------------------------------------------------------------------------
# The BOM
# --------------------------------------------------------------------------------------------
def _props(pairs):
    return [Property(name=name, value=str(value)) for name, value in pairs if value not in (None, "", [])]


def _hashes(sha256):
    return [HashType(alg=HashAlgorithm.SHA_256, content=sha256)] if sha256 else []


def uri(url):
    """``url`` as a URI reference the schema accepts (``iri-reference``): a '%' that starts no escape,
    a second '#', and characters a URI cannot hold (non-ASCII, '\\', '^', '|', quotes, brackets outside
    the host) percent-encoded. The lock's URLs are fetched as written; only their SBOM spelling changes."""
    url = re.sub(r"%(?![0-9A-Fa-f]{2})", "%25", url)
    head, sep, fragment = url.partition("#")
    safe = "%:/?@!$&'()*+,;=-._~"
    scheme, colon, rest = head.partition("://")
    if colon and rest.startswith("["):  # an IPv6 host keeps its brackets
        host, bracket, tail = rest.partition("]")
        head = scheme + colon + host + bracket + urllib.parse.quote(tail, safe=safe)
    else:
        head = urllib.parse.quote(head, safe=safe)
    return head + sep + urllib.parse.quote(fragment, safe=safe) if sep else head


def _distribution(url):
    if not url:
        return []
    return [ExternalReference(type=ExternalReferenceType.DISTRIBUTION, url=XsUri(uri(url)))]


def _deb_arch(path):
    """A Debian file name is NAME_VERSION_ARCH.deb (apt and dpkg-deb name them so)."""
    base = path.rsplit("/", 1)[-1]
    if base.endswith(".deb") and base.count("_") >= 2:
        arch = base[:-4].rsplit("_", 1)[1]
        if _DEB_ARCH.match(arch):
            return arch
    return None


def _image_parts(ref):
    """``(repository, tag)`` of an image reference without its digest."""
    repo, tag = split_tag(ref.split("@", 1)[0])
    return repo, tag


def _image_purl(ref, digest, arch):
    repo, tag = _image_parts(ref)
    qualifiers = {"repository_url": repo}
    if tag:
        qualifiers["tag"] = tag
    if arch:
        qualifiers["arch"] = arch
    return PackageURL(type="oci", name=repo.rsplit("/", 1)[-1].lower(), version=digest or None, qualifiers=qualifiers)


def _artifact_component(addon_name, addon_version, entry, context):
    """One file of a package (a package.json ``files`` entry) as a component, or None for the package's
    own index files."""
    kind = entry.get("kind")
    if kind not in KIND_TYPES:
        return None
    path, sha = entry["path"], entry.get("sha256")
    arch = entry.get("arch")
    arch = arch if arch and arch != "all" else None
    url = entry.get("url")
    props = [("mooring:addon", addon_name), ("mooring:addon:version", addon_version), ("mooring:kind", kind),
             ("mooring:path", path), ("mooring:size", entry.get("size"))]
    if kind == "deb":
        name = entry.get("package") or entry.get("name") or path.rsplit("/", 1)[-1]
        version = entry.get("version") or addon_version
        deb_arch = _deb_arch(path)
        purl = PackageURL(type="deb", namespace=context["distro"], name=name, version=version,
                          qualifiers={"arch": deb_arch} if deb_arch else None)
        props.append(("mooring:source", entry.get("source")))
        tofu = url in context["tofu_urls"]
    elif kind == "image":
        ref = entry.get("ref") or path
        image = context["images"].get(ref, {})
        repo, tag = _image_parts(ref)
        digest = image.get("digest")
        name, version = repo, tag or digest or addon_version
        archive = image.get("archive") or {}
        url = archive.get("url")
        purl = _image_purl(ref, digest, None)
        props += [("mooring:image:ref", ref), ("mooring:image:digest", digest),
                  ("mooring:image:format", entry.get("format"))]
        tofu = (not archive.get("sha256")) if archive else not digest
    else:
        name = entry.get("name") or path.rsplit("/", 1)[-1]
        version = context["install_versions"].get(path) or addon_version
        wheel = _WHEEL.match(path.rsplit("/", 1)[-1]) if kind == "wheel" else None
        if wheel:
            purl = PackageURL(type="pypi", name=wheel.group(1).lower().replace("_", "-"), version=wheel.group(2))
        else:
            qualifiers = {"checksum": "sha256:%s" % sha} if sha else {}
            if arch:
                qualifiers["arch"] = arch
            purl = PackageURL(type="generic", name=name, version=version, qualifiers=qualifiers or None)
        props.append(("mooring:arch", entry.get("arch")))
        tofu = url in context["tofu_urls"]
    if tofu:
        props.append(("mooring:trustedOnFirstUse", "true"))
    return Component(type=getattr(ComponentType, KIND_TYPES[kind]), bom_ref="file:%s" % path, name=name,
                     version=str(version) if version is not None else None, hashes=_hashes(sha), purl=purl,
                     external_references=_distribution(url), properties=_props(props))


def _addon_component(name, meta, package):
    """An add-on package (its tar in the bundle) with its artifacts nested in it."""
    lock_addon = package.get("_lock") or {}
    inputs = package.get("inputs") or {}
    version = package.get("version", meta.get("version"))
    context = {
        "distro": package.get("distro") or "debian",
        "images": {i.get("ref"): i for i in inputs.get("images") or []},
        "tofu_urls": {a.get("url") for a in inputs.get("artifacts") or [] if not a.get("sha256")},
        "install_versions": {i.get("artifact"): i.get("version") for i in package.get("installs") or []
                             if i.get("artifact")},
    }
    for image in package.get("images") or []:  # the digest the builder recorded
        context["images"].setdefault(image.get("ref"), {}).setdefault("digest", image.get("digest"))
    children = []
    for entry in package.get("files") or []:
        child = _artifact_component(name, version, entry, context)
        if child is not None:
            children.append(child)
    props = [("mooring:addon", name), ("mooring:category", lock_addon.get("category")),
             ("mooring:path", meta.get("file")), ("mooring:size", meta.get("size")),
             ("mooring:package:key", meta.get("key")), ("mooring:repo", meta.get("repo")),
             ("mooring:hostPackages", ",".join(meta.get("packages") or []))]
    component = Component(type=ComponentType.APPLICATION, bom_ref="addon:%s" % name, name=name,
                          version=str(version) if version is not None else None,
                          description="mooring.cluster add-on package %s" % meta.get("file"),
                          hashes=_hashes(meta.get("sha256")), properties=_props(props), components=children)
    return component, children


def build_bom(manifest, bundle_id, packages):
    """The :class:`cyclonedx.model.bom.Bom` of a bundle: ``manifest`` is its bundle.json (a mapping),
    ``packages`` maps each add-on to its package.json (what the package carries, per file)."""
    require()
    lock = manifest.get("lock") or {}
    installer = (lock.get("metadata") or {}).get("name") or "bundle"
    bundle = Component(
        type=ComponentType.FILE, bom_ref="bundle:%s" % bundle_id, name=str(installer), version=bundle_id,
        description="mooring.cluster air-gap bundle of installer %s (spec hash %s)" % (installer, lock.get("hash")),
        properties=_props([("mooring:bundle:id", bundle_id), ("mooring:bundle:format", manifest.get("bundleFormat")),
                           ("mooring:lock:digest", manifest.get("lockDigest")),
                           ("mooring:spec:hash", manifest.get("hash")),
                           ("mooring:spec:digest", manifest.get("specDigest")),
                           ("mooring:signer", manifest.get("signer")), ("mooring:distro", manifest.get("distro")),
                           ("mooring:architectures", ",".join(lock.get("architectures") or [])),
                           ("mooring:sandboxImage", manifest.get("sandboxImage"))]))
    tools = [Component(type=ComponentType.APPLICATION, group=TOOL_GROUP, name=TOOL_NAME, version=tool_version(),
                       description="air-gap bundle builder (mooring bundle build)")]
    library_version = _library_version()
    tools.append(Component(type=ComponentType.LIBRARY, group="CycloneDX", name="cyclonedx-python-lib",
                           version=library_version,
                           purl=PackageURL(type="pypi", name="cyclonedx-python-lib", version=library_version)))
    metadata = BomMetaData(component=bundle, tools=ToolRepository(components=tools), timestamp=_source_date())
    if PredefinedLifecycle is not None:
        metadata.lifecycles = [PredefinedLifecycle(LifecyclePhase.BUILD)]
    bom = Bom(serial_number=uuid.uuid5(SERIAL_NAMESPACE, bundle_id), metadata=metadata)
    addons = []
    for name in sorted(manifest.get("packages") or {}):
        package = dict(packages.get(name) or {})
        package["_lock"] = (lock.get("addons") or {}).get(name) or {}
        component, children = _addon_component(name, manifest["packages"][name], package)
        bom.components.add(component)
        bom.register_dependency(component, children)
        for child in children:
            bom.register_dependency(child)
        addons.append(component)
    bom.register_dependency(bundle, addons)
    return bom


def render(manifest, bundle_id, packages):
    """The SBOM's bytes (CycloneDX 1.6 JSON, sorted keys, no timestamp unless SOURCE_DATE_EPOCH),
    validated; a document the schema refuses raises :class:`SbomError`."""
    source_date = _source_date()
    bom = build_bom(manifest, bundle_id, packages)
    try:
        document = json.loads(JsonV1Dot6(bom).output_as_string())
    except Exception as exc:  # noqa: BLE001 - the library's own errors (bom-refs, licenses, URIs) in one line
        raise SbomError("bundle %s: cannot write the CycloneDX SBOM: %s" % (bundle_id[:16], _line(exc))) from exc
    if source_date is None:
        # The library always stamps the current time; a file compared run after run must not change with it.
        document.get("metadata", {}).pop("timestamp", None)
    data = (json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    validate(data, "bundle %s: SBOM" % bundle_id[:16])
    return data


def validate(data, where="SBOM"):
    """Check CycloneDX 1.6 JSON ``data`` (bytes or text) with cyclonedx-python-lib's strict JSON validator;
    :class:`SbomError` names the first problem and where it is."""
    require()
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    try:
        error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    except MissingOptionalDependencyException as exc:
        raise missing_library(VALIDATOR_PACKAGE, "to validate the bundle's SBOM", _line(exc), SbomError) from None
    except ValueError as exc:  # not JSON at all
        raise SbomError("%s: not JSON (%s)" % (where, _line(exc))) from None
    if error is None:
        return
    detail = getattr(error, "data", None)
    at = "/".join(str(p) for p in getattr(detail, "absolute_path", None) or [])
    message = getattr(detail, "message", None) or str(error)
    at = " at /%s" % at if at else ""
    raise SbomError("%s: not valid CycloneDX %s JSON%s: %s" % (where, SPEC_VERSION, at, _line(message)))


def _line(value):
    text = str(value).strip()
    first = text.splitlines()[0] if text else type(value).__name__
    return first if len(first) <= 300 else first[:297] + "..."

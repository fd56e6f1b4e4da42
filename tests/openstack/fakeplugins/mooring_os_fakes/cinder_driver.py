"""Test-only Cinder volume driver: cinder's own fake driver that "clones" images.

Creating a volume from an image would otherwise download it and inspect it with qemu-img
through a privileged helper, which this host does not have. The volume is recorded as made
from the image (bootable, with its Glance metadata) without copying any data.
"""

from cinder.tests import fake_driver


class ImageCloningFakeDriver(fake_driver.FakeLoggingVolumeDriver):
    """FakeLoggingVolumeDriver whose clone_image always succeeds without data."""

    def clone_image(self, context, volume, image_location, image_meta, image_service):
        return {}, True

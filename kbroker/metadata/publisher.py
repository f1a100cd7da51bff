"""What every metadata source shares: the latest image, its publishers, and waiting for an image to come."""

from __future__ import annotations

from collections.abc import Callable

import trio

from kbroker.metadata.api import MetadataPublisher
from kbroker.metadata.image import MetadataImage


class ImagePublisher:
    """The publishing half of a MetadataView (kbroker/metadata/api.py): subclasses call `_publish(image)`."""

    def __init__(self, image: MetadataImage) -> None:
        self._image = image
        self._publishers: list[MetadataPublisher] = []
        self._published = trio.Event()

    def image(self) -> MetadataImage:
        return self._image

    def subscribe(self, publisher: MetadataPublisher) -> None:
        self._publishers.append(publisher)

    async def wait_for(
        self, predicate: Callable[[MetadataImage], bool], timeout_s: float
    ) -> MetadataImage | None:
        with trio.move_on_after(timeout_s):
            while not predicate(self._image):
                await self._published.wait()
            return self._image
        return None

    def _publish(self, image: MetadataImage) -> None:
        """Make `image` current and hand it to every publisher, in order, before anyone else can observe it."""
        self._image = image
        for publisher in self._publishers:
            publisher(image)
        self._published.set()
        self._published = trio.Event()

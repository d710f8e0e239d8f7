"""Local mechanisms that release data (paper 000: ZIL) and the append-only release store."""

from privest.release.store import load_release, read_manifest, save_release
from privest.release.zil import ZILMechanism, ZILRelease

__all__ = ["ZILMechanism", "ZILRelease", "load_release", "read_manifest", "save_release"]

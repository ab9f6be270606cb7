"""dpaudit: privacy attacks and empirical ε audits for DP clustering mechanisms."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dpaudit")
except PackageNotFoundError:  # running from a source checkout without install
    __version__ = "0.1.0"

__all__ = ["__version__"]

"""dpaudit: privacy attacks and empirical ε audits for DP clustering mechanisms."""

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    """``__version__`` is read from the installed metadata on first use (importlib.metadata is slow to
    import, and ``dpaudit --help`` does not need it)."""
    if name != "__version__":
        raise AttributeError(f"module 'dpaudit' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("dpaudit")
    except PackageNotFoundError:  # running from a source checkout without install
        value = "0.1.0"
    globals()["__version__"] = value
    return value

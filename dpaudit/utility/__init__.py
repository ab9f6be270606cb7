"""Utility of a clustering: how much structure survives the privacy mechanism.

:mod:`~dpaudit.utility.metrics` — ARI, AMI, F-measure, internal metrics and NICV;
:mod:`~dpaudit.utility.clusterers` — the clusterers run on released points.
"""

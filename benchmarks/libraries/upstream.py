"""What each finding's library already knows: its public tracker looked up, by hand, on the date given.

Harness-side (``benchmarks/libraries/page.py`` shows it).  A finding is keyed by the panel's row names that show
it (the same cause in the library and its fork is one finding).  ``status`` is "known: <repo>#<n> (state, date)"
when the tracker has it, "not found upstream as of <date>" otherwise — with ``searched``, the exact terms looked
up — and ``report`` the upstream-ready report written for a finding not known upstream (docs/findings/).
Re-check before sending: trackers move.
"""

from __future__ import annotations

CHECKED = "2026-11-28"
IBM = "IBM/differential-privacy-library"


FINDINGS: tuple[dict, ...] = (
    {"rows": ("diffprivlib.models.LinearRegression", "diffprivlib-fix: models.LinearRegression"),
     "short": "known: IBM #105 (open), fix PR #110 (open)",
     "title": "LinearRegression calibrates the noise of x_i² with the lower bound twice",
     "status": f"known: {IBM}#105 (open, 2026-02-04); fix in pull request #110 (open since 2026-08-21); also item 1 "
               f"of #104 (open, 2025-09-20)",
     "searched": ["diffprivlib LinearRegression bounds_X[0][i] sensitivity lower bound twice"],
     "report": None},
    {"rows": ("diffprivlib.models.LogisticRegression (classes read from y: a class may be absent)",
              "diffprivlib-fix: models.LogisticRegression (classes read from y: a class may be absent)"),
     "short": "known: IBM #106 (open)",
     "title": "LogisticRegression reads its classes from y",
     "status": f"known: {IBM}#106 (open, 2026-02-04), \"Domain Inference via the label set\"",
     "searched": ["diffprivlib LogisticRegression classes inferred from data np.unique(y) privacy leak"],
     "report": None},
    {"rows": ("diffprivlib.models.DecisionTreeClassifier (no classes given: a class may be absent)",
              "diffprivlib.models.RandomForestClassifier (no classes given: a class may be absent)"),
     "short": "known: documented (PrivacyLeakWarning); cause as IBM #106",
     "title": "DecisionTreeClassifier and RandomForestClassifier read their classes from y when not given them",
     "status": "known: documented by the library itself — `classes=` exists and a PrivacyLeakWarning is raised when "
               f"it is not given; the same cause as {IBM}#106 (open)",
     "searched": ["diffprivlib LogisticRegression classes inferred from data np.unique(y) privacy leak"],
     "report": None},
    {"rows": ("diffprivlib.models.GaussianNB (a class may be absent)", "diffprivlib-fix: models.GaussianNB (a class "
                                                                        "may be absent)"),
     "short": "partly known (IBM #106, for LogisticRegression); report written",
     "title": "GaussianNB releases which classes the data holds, even when the classes are stated",
     "status": f"cause partly known: {IBM}#106 (open) reports the label set read from y for LogisticRegression only; "
               f"not found upstream as of {CHECKED} for GaussianNB, nor that stating the classes "
               "(partial_fit(classes=…)) leaves the absent class's row unnoised",
     "searched": ["diffprivlib LogisticRegression classes inferred from data np.unique(y) privacy leak",
                  "diffprivlib GaussianNB classes absent class_count_ theta_ noise"],
     "report": "docs/findings/diffprivlib-gaussian-nb-classes.md"},
    {"rows": ("diffprivlib.models.KMeans", "diffprivlib-fix: models.KMeans"),
     "short": "not found upstream; report written",
     "title": "KMeans skips an empty cluster: its centre is released without noise",
     "status": f"not found upstream as of {CHECKED}: no issue or pull request of {IBM} names the empty-cluster skip; "
               f"#104 (open, 2025-09-20) lists \"k-means\" among five correctness issues, but the part of it we could "
               "read is about linear regression — check it before sending",
     "searched": ["diffprivlib KMeans empty cluster no noise privacy leak",
                  "diffprivlib k-means _update_centers epsilon per iteration sensitivity cluster count noise",
                  "IBM differential-privacy-library issue 104 k_means.py _update_centers current problem"],
     "report": "docs/findings/diffprivlib-kmeans-empty-cluster.md"},
    {"rows": ("diffprivlib-fix as pip resolves it: models.KMeans",),
     "short": "not found upstream; report written",
     "title": "diffprivlib-fix 0.6.7 cannot be imported with scikit-learn 1.9 (the version pip resolves)",
     "status": f"not found upstream as of {CHECKED}: the fork names IBM's repository as its home page and has no "
               f"tracker of its own; nothing in {IBM}'s (the same removal of `DOUBLE` broke uber/causalml, #926)",
     "searched": ["diffprivlib ImportError cannot import name 'DOUBLE' from 'sklearn.tree._tree'"],
     "report": "docs/findings/diffprivlib-fix-scikit-learn-1.9.md"},
    {"rows": ("diffpriv-pure: private_count",),
     "short": "not found upstream (no tracker); report written",
     "title": "diffpriv-pure's geometric noise is one-sided: a count is never under-reported",
     "status": f"not found upstream as of {CHECKED}: the package names no repository or tracker (its metadata has "
               "only an author e-mail); no issue anywhere in the searched trackers",
     "searched": ["diffpriv-pure geometric noise one-sided private_count"],
     "report": "docs/findings/diffpriv-pure-one-sided-geometric.md"},
)


def upstream_of(row_name: str) -> dict | None:
    """The finding a row shows, with its upstream status (None: the row has no finding)."""
    return next((f for f in FINDINGS if row_name in f["rows"]), None)
